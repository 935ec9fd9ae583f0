// The record button's audio: the microphone (getUserMedia), and, when asked and the browser offers it,
// a tab's or the screen's sound (getDisplayMedia) mixed in with WebAudio, turned into 24 kHz pcm16 by
// an AudioWorklet (record-worklet.js), or by a ScriptProcessor where there is no AudioWorklet. Each
// 100 ms the caller gets `onChunk(pcm, level)`.
import { createPcmEncoder, levelOf, STREAM_RATE } from './pcm.js'

/** A capture that could not start, with a message that says what to do (`kind`: permission, no-microphone, busy, insecure, unsupported). */
class CaptureFailure extends Error {
  constructor(kind, message) {
    super(message)
    this.kind = kind
  }
}

export const canShareTabAudio = () => !!(navigator.mediaDevices && navigator.mediaDevices.getDisplayMedia)

function microphoneFailure(err) {
  const name = err && err.name
  if (name === 'NotAllowedError' || name === 'SecurityError' || name === 'PermissionDeniedError') {
    return new CaptureFailure('permission', 'Microphone access was refused. Allow the microphone for this site (the icon at the left of the address bar, or the browser\'s site settings), then press Start recording again.')
  }
  if (name === 'NotFoundError' || name === 'OverconstrainedError' || name === 'DevicesNotFoundError') {
    return new CaptureFailure('no-microphone', 'No microphone was found. Connect one (or choose it in the system\'s sound settings), then press Start recording again.')
  }
  if (name === 'NotReadableError' || name === 'AbortError' || name === 'TrackStartError') {
    return new CaptureFailure('busy', 'The microphone could not be started: another program may be using it. Close that program, then press Start recording again.')
  }
  return new CaptureFailure('unsupported', `The microphone could not be started (${name || err}). Reload the page and try again.`)
}

async function microphone() {
  if (!window.isSecureContext || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    throw new CaptureFailure('insecure', 'Recording needs a secure page: open notesvc over https:// (or on this computer as localhost), then press Start recording again.')
  }
  try {
    return await navigator.mediaDevices.getUserMedia({ audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false } })
  } catch (err) {
    throw microphoneFailure(err)
  }
}

/** The shared tab's or screen's audio, or null with `note` saying why there is none. */
async function sharedAudio(note) {
  let stream
  try {
    stream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: true })
  } catch {
    note('No tab or screen was shared: recording the microphone only.')
    return null
  }
  if (!stream.getAudioTracks().length) {
    stream.getTracks().forEach(t => t.stop())
    note('The shared tab or screen has no sound (tick "Share audio" in the browser\'s dialog next time): recording the microphone only.')
    return null
  }
  return stream
}

/** An AudioContext at the stream's rate where the browser can feed it a microphone; else at its own rate (the encoder resamples). */
function contextFor(mic) {
  try {
    const context = new AudioContext({ sampleRate: STREAM_RATE })
    return { context, source: context.createMediaStreamSource(mic) }
  } catch {
    const context = new AudioContext()
    return { context, source: context.createMediaStreamSource(mic) }
  }
}

async function encoderNode(context, workletUrl, deliver) {
  if (context.audioWorklet) {
    await context.audioWorklet.addModule(workletUrl)
    const node = new AudioWorkletNode(context, 'notesvc-pcm', { numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1, channelCountMode: 'explicit', channelInterpretation: 'speakers' })
    let flushed = () => {}
    node.port.onmessage = e => {
      if (e.data.pcm.length) deliver(e.data.pcm, e.data.level)
      if (e.data.flushed) flushed()
    }
    // a context that no longer runs answers no flush: then what it held is not waited for
    const flush = () => new Promise(resolve => {
      flushed = resolve
      node.port.postMessage('flush')
      setTimeout(resolve, 1000)
    })
    return { node, flush }
  }
  // Without AudioWorklet (older browsers): the same encoder on the main thread.
  const node = context.createScriptProcessor(4096, 1, 1)
  const encode = createPcmEncoder(context.sampleRate)
  node.onaudioprocess = e => {
    const pcm = encode(e.inputBuffer.getChannelData(0))
    if (pcm.length) deliver(pcm, levelOf(pcm))
  }
  node.connect(context.destination)
  return { node, flush: async () => {} }
}

/**
 * Starts capturing: `{ stop() }` once audio flows (a CaptureFailure when it cannot). `note(text)` is told
 * what changed on the way that is not a failure (no tab audio after all, a track that ended).
 */
export async function startCapture({ withTabAudio, workletUrl, onChunk, note }) {
  const mic = await microphone()
  const shared = withTabAudio && canShareTabAudio() ? await sharedAudio(note) : null
  const streams = [mic, shared].filter(Boolean)
  let context
  try {
    const made = contextFor(mic)
    context = made.context
    const mixer = context.createGain()
    made.source.connect(mixer)
    if (shared) context.createMediaStreamSource(shared).connect(mixer)
    const encoder = await encoderNode(context, workletUrl, onChunk)
    mixer.connect(encoder.node)
    if (context.state === 'suspended') await context.resume()
    mic.getAudioTracks()[0].addEventListener('ended', () => note('The microphone stopped (it was unplugged or switched off). Connect it again and start a new recording; what was said so far is kept when you stop.'))
    return {
      /** the last partial chunk, then everything released */
      async stop() {
        await encoder.flush()
        streams.forEach(s => s.getTracks().forEach(t => t.stop()))
        await context.close().catch(() => {})
      },
    }
  } catch (err) {
    streams.forEach(s => s.getTracks().forEach(t => t.stop()))
    if (context) context.close().catch(() => {})
    throw err instanceof CaptureFailure ? err : new CaptureFailure('unsupported', `This browser could not process the microphone's sound (${err && err.message ? err.message : err}). Try a current Chrome, Edge, Firefox or Safari.`)
  }
}
