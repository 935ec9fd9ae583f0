/**
 * Getting the diarization model files into `<modelsDir>/diarization/`: downloaded from sherpa-onnx's
 * GitHub releases (`notesvc models pull diarization`), or copied in from a file brought from another
 * machine (`notesvc models import FILE [--name segmentation|embedding]`).
 *
 * Every file is checked as sherpa-onnx would read it (checkDiarizationModel: an ONNX model with the
 * metadata its role needs) before it takes the final name, and written to a temporary name in the same
 * folder and renamed, so the engine never sees half a file. There is no list of published checksums
 * to check against: sherpa-onnx's releases publish none, and GitHub sends none; the SHA-256 of what
 * was written is reported instead, to compare by hand.
 */
import { copyFileSync, createReadStream, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { commandLine } from '../../command-name'
import { checkDiarizationModel, DiarizationModelError, diarizationModelPath, pullDiarizationCommand, type DiarizationModelRole } from './models'
import { tryDiarizationModels } from './model-trial'

const SHERPA_RELEASES_URL = 'https://github.com/k2-fsa/sherpa-onnx/releases/download'

/** The release artifacts `models pull diarization` fetches (the pair sherpa-onnx's diarization examples use). */
const DIARIZATION_DOWNLOADS: Record<DiarizationModelRole, { path: string; member?: string }> = {
  segmentation: {
    path: 'speaker-segmentation-models/sherpa-onnx-pyannote-segmentation-3-0.tar.bz2',
    member: 'sherpa-onnx-pyannote-segmentation-3-0/model.onnx',
  },
  embedding: { path: 'speaker-recongition-models/3dspeaker_speech_eres2net_base_sv_zh-cn_3dspeaker_16k.onnx' },
}

/** A download or an import did not happen; the message says what to do instead. */
export class DiarizationPullError extends Error {}

export interface InstalledModel {
  role: DiarizationModelRole
  path: string
  bytes: number
  sha256: string
}

async function sha256Of(path: string): Promise<string> {
  const hash = new Bun.CryptoHasher('sha256')
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) hash.update(chunk as Buffer)
  return hash.digest('hex')
}

/**
 * Checks `staged` (a file in the destination folder) for `role`, metadata first, then loaded and run
 * by sherpa-onnx in a child process (model-trial.ts), and renames it into place; removes it when it fails.
 */
async function install(staged: string, role: DiarizationModelRole | undefined, modelsDir: string, what: string): Promise<InstalledModel> {
  let found: DiarizationModelRole
  try {
    found = checkDiarizationModel(staged, role)
    await tryDiarizationModels({ [found]: staged })
  } catch (err) {
    rmSync(staged, { force: true })
    if (!(err instanceof DiarizationModelError)) throw err
    const tried = err.message.startsWith('sherpa-onnx ') ? `; it was not installed: download a sound copy with \`${pullDiarizationCommand()}\`, or import another file` : ''
    throw new DiarizationPullError(`${err.message.replaceAll(staged, what)}${tried}`)
  }
  const dest = diarizationModelPath(modelsDir, found)
  const sha256 = await sha256Of(staged)
  renameSync(staged, dest)
  return { role: found, path: dest, bytes: statSync(dest).size, sha256 }
}

function stagingName(modelsDir: string): string {
  const dir = dirname(diarizationModelPath(modelsDir, 'segmentation'))
  mkdirSync(dir, { recursive: true })
  return join(dir, `.import-${process.pid}-${Date.now()}.part`)
}

/** Copies a model file into the models folder as the role it is (`as`, or what its metadata says). */
export async function importDiarizationModel(o: { file: string; modelsDir: string; as?: DiarizationModelRole }): Promise<InstalledModel> {
  if (!existsSync(o.file) || !statSync(o.file).isFile()) throw new DiarizationPullError(`there is no file ${o.file}`)
  // Checked before the copy too, so a wrong file costs no copy and its message names it.
  try {
    checkDiarizationModel(o.file, o.as)
  } catch (err) {
    if (err instanceof DiarizationModelError) throw new DiarizationPullError(err.message)
    throw err
  }
  const staged = stagingName(o.modelsDir)
  copyFileSync(o.file, staged)
  return install(staged, o.as, o.modelsDir, o.file)
}

function offlineAdvice(): string {
  const urls = Object.values(DIARIZATION_DOWNLOADS).map(d => `${SHERPA_RELEASES_URL}/${d.path}`)
  return (
    `on a host without internet, download ${urls.join(' and ')} on another machine ` +
    `(take model.onnx out of the .tar.bz2), copy them here and run ` +
    `\`${commandLine('models import model.onnx --name segmentation')}\` and \`${commandLine(`models import ${DIARIZATION_DOWNLOADS.embedding.path.split('/').pop()} --name embedding`)}\``
  )
}

async function download(url: string, to: string, doFetch: typeof fetch): Promise<void> {
  let res: Response
  try {
    res = await doFetch(url, { redirect: 'follow' })
  } catch (err) {
    throw new DiarizationPullError(`could not reach ${url} (${(err as Error).message}); ${offlineAdvice()}`)
  }
  if (!res.ok) throw new DiarizationPullError(`${url} answered HTTP ${res.status}; try again later, or ${offlineAdvice()}`)
  writeFileSync(to, new Uint8Array(await res.arrayBuffer()))
}

/** Takes one member out of a .tar.bz2 with the system's tar (and bzip2). */
async function extractMember(archive: string, member: string, to: string): Promise<void> {
  const dir = mkdtempSync(join(dirname(to), '.extract-'))
  try {
    const tar = Bun.spawn(['tar', '-xjf', archive, '-C', dir, member], { stdout: 'ignore', stderr: 'pipe' })
    const [code, stderr] = await Promise.all([tar.exited, new Response(tar.stderr).text()])
    if (code !== 0) throw new DiarizationPullError(`could not take ${member} out of the downloaded archive with tar (${stderr.trim() || `exit ${code}`}); install tar and bzip2, or ${offlineAdvice()}`)
    renameSync(join(dir, member), to)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Downloads both models (a file already there and sound is kept). Throws DiarizationPullError, whose
 * message says how to get the files onto a host without internet.
 */
export async function pullDiarizationModels(o: { modelsDir: string; baseUrl?: string; fetch?: typeof fetch; onFile?: (role: DiarizationModelRole, url: string) => void }): Promise<(InstalledModel & { kept: boolean })[]> {
  const doFetch = o.fetch ?? fetch
  const base = (o.baseUrl ?? SHERPA_RELEASES_URL).replace(/\/+$/, '')
  const out: (InstalledModel & { kept: boolean })[] = []
  for (const role of ['segmentation', 'embedding'] as const) {
    const dest = diarizationModelPath(o.modelsDir, role)
    if (existsSync(dest)) {
      try {
        checkDiarizationModel(dest, role)
        await tryDiarizationModels({ [role]: dest })
        out.push({ role, path: dest, bytes: statSync(dest).size, sha256: await sha256Of(dest), kept: true })
        continue
      } catch {
        // not sound: download it again
      }
    }
    const { path, member } = DIARIZATION_DOWNLOADS[role]
    const url = `${base}/${path}`
    o.onFile?.(role, url)
    const staged = stagingName(o.modelsDir)
    try {
      if (member) {
        await download(url, `${staged}.tar.bz2`, doFetch)
        await extractMember(`${staged}.tar.bz2`, member, staged)
      } else {
        await download(url, staged, doFetch)
      }
      out.push({ ...(await install(staged, role, o.modelsDir, url)), kept: false })
    } finally {
      rmSync(`${staged}.tar.bz2`, { force: true })
      rmSync(staged, { force: true })
    }
  }
  return out
}
