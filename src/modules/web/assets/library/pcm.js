// What the live stream sends (docs/realtime.md): 16-bit little-endian mono PCM at 24 kHz, OpenAI's
// rate, from the Float32 samples of the page's audio graph at whatever rate the browser runs it (48 kHz
// mostly; 24 kHz when it honours the rate asked for). Shared by the AudioWorklet (record-worklet.js)
// and the ScriptProcessor fallback (record-audio.js). Written here rather than taken from a library:
// the page loads nothing from elsewhere and bundles no npm package, and the whole job is a box filter
// and a step: each output sample is the mean of the input samples it covers. From 48 kHz the mean of
// two damps what would fold back from above 12 kHz (by half at 15 kHz) and lowers the speech band a
// little (4 % at 4 kHz, 13 % at 8 kHz, the top of what the 16-kHz engine hears).

export const STREAM_RATE = 24000

/** An encoder from `inputRate` to STREAM_RATE, keeping what is left between calls. */
export function createPcmEncoder(inputRate, outputRate = STREAM_RATE) {
  const step = inputRate / outputRate
  let carry = new Float32Array(0)
  /** where the next output sample starts, in samples of `carry` + the next input */
  let at = 0
  return function encode(input) {
    const buf = carry.length ? concat(carry, input) : input
    const out = new Int16Array(Math.ceil((buf.length - at) / step) + 1)
    let n = 0
    while (at + step <= buf.length + 1e-9) {
      const from = Math.floor(at)
      const to = Math.max(from + 1, Math.min(buf.length, Math.floor(at + step)))
      let sum = 0
      for (let i = from; i < to; i++) sum += buf[i]
      out[n++] = toInt16(sum / (to - from))
      at += step
    }
    const used = Math.min(buf.length, Math.floor(at))
    carry = buf.slice(used)
    at -= used
    return out.subarray(0, n)
  }
}

function concat(a, b) {
  const out = new Float32Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

function toInt16(x) {
  const s = x > 1 ? 1 : x < -1 ? -1 : x
  return Math.round(s < 0 ? s * 0x8000 : s * 0x7fff)
}

/** The loudness of a block of samples for a meter, 0 (below -60 dBFS) to 1 (full scale). */
export function levelOf(pcm) {
  if (!pcm.length) return 0
  let sum = 0
  for (let i = 0; i < pcm.length; i++) sum += pcm[i] * pcm[i]
  const rms = Math.sqrt(sum / pcm.length) / 0x8000
  const db = rms > 0 ? 20 * Math.log10(rms) : -Infinity
  return Math.max(0, Math.min(1, (db + 60) / 60))
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1

/** Standard base64 of PCM samples' little-endian bytes (input_audio_buffer.append's `audio`). */
export function base64Pcm(pcm) {
  let bytes = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength)
  if (!LITTLE_ENDIAN) {
    const view = new DataView(new ArrayBuffer(pcm.byteLength))
    pcm.forEach((v, i) => view.setInt16(i * 2, v, true))
    bytes = new Uint8Array(view.buffer)
  }
  let binary = ''
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000))
  return btoa(binary)
}
