import { makeWav } from '../fixtures/wav'

export interface Answer { status: number; body: any; headers: Headers }

/** One request to a kit's server over HTTP, as an application would make it. */
export async function call(base: string, method: string, path: string, key?: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const h: Record<string, string> = { ...headers }
  if (key) h.authorization = `Bearer ${key}`
  if (body !== undefined) h['content-type'] = 'application/json'
  const res = await fetch(`${base}${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers }
}

/**
 * A recording uploaded the way SPEC describes (createUpload, the PUT to the answer's URL with its
 * headers, completeUpload): the upload's and the completion's answers.
 */
export async function uploadRecording(base: string, key: string, fileName = 'standup.wav') {
  const wav = makeWav({ seconds: 1 })
  const created = await call(base, 'POST', '/v1/uploads', key, { fileName, contentType: 'audio/wav', fileSize: wav.length })
  if (created.status !== 201) throw new Error(`createUpload answered ${created.status}: ${JSON.stringify(created.body)}`)
  const put = await fetch(created.body.uploadUrl, { method: 'PUT', headers: created.body.headers, body: new Uint8Array(wav) })
  if (!put.ok) throw new Error(`the PUT answered ${put.status}: ${await put.text()}`)
  const completed = await call(base, 'POST', `/v1/uploads/${created.body.noteId}/complete`, key)
  return { created, completed }
}

/** Whether anything still accepts connections at `url`. */
export async function refuses(url: string): Promise<boolean> {
  try {
    await fetch(`${url}/v1/health`)
    return false
  } catch {
    return true
  }
}
