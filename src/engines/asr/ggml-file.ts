/**
 * Checks that a file is a whole whisper.cpp ggml model before it is copied into the models folder:
 * reads it the way whisper.cpp 1.9's `whisper_model_load` does — magic, hyperparameters, mel filters,
 * vocabulary, then every tensor's header — without reading the weights, and checks that each tensor
 * has the size its shape and type give, that there are as many tensors as the layer counts call for
 * (whisper.cpp refuses a model with "not all tensors loaded") and that the file ends after the last.
 * A truncated download, a file of another format or a damaged header is caught here; damaged weights
 * are caught only by a checksum.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

const GGML_MAGIC = 0x67676d6c

/** ggml tensor types whisper models use: [bytes per block, values per block]. */
const TYPE_SIZES: Record<number, [number, number]> = {
  0: [4, 1], // f32
  1: [2, 1], // f16
  2: [18, 32], // q4_0
  3: [20, 32], // q4_1
  6: [22, 32], // q5_0
  7: [24, 32], // q5_1
  8: [34, 32], // q8_0
  10: [84, 256], // q2_K
  11: [110, 256], // q3_K
  12: [144, 256], // q4_K
  13: [176, 256], // q5_K
  14: [210, 256], // q6_K
}

export interface GgmlModelInfo {
  vocab: number
  audioLayers: number
  textLayers: number
  state: number
  mels: number
  tensors: number
  multilingual: boolean
}

/** Not a whole whisper.cpp ggml model; the message says what is wrong. */
export class GgmlModelError extends Error {}

/** Reads little-endian values at a moving position, through a 1 MiB window. */
class FileReader {
  private window = Buffer.alloc(0)
  private windowAt = 0
  pos = 0
  constructor(private fd: number, readonly size: number) {}
  bytes(n: number): Buffer {
    if (this.pos + n > this.size) throw new GgmlModelError(`it ends early (at byte ${this.size}, ${this.pos + n} needed): an incomplete copy or download`)
    if (this.pos < this.windowAt || this.pos + n > this.windowAt + this.window.length) {
      this.window = Buffer.alloc(Math.max(n, 1 << 20))
      const got = readSync(this.fd, this.window, 0, this.window.length, this.pos)
      this.window = this.window.subarray(0, got)
      this.windowAt = this.pos
    }
    const out = this.window.subarray(this.pos - this.windowAt, this.pos - this.windowAt + n)
    this.pos += n
    return out
  }
  i32(): number {
    return this.bytes(4).readInt32LE(0)
  }
}

function positive(name: string, v: number, max: number): number {
  if (!Number.isInteger(v) || v <= 0 || v > max) throw new GgmlModelError(`its ${name} (${v}) is not a Whisper model's`)
  return v
}

/** Throws GgmlModelError with the reason when `path` is not a whole whisper.cpp ggml model. */
export function checkGgmlModel(path: string): GgmlModelInfo {
  const fd = openSync(path, 'r')
  try {
    const r = new FileReader(fd, fstatSync(fd).size)
    if (r.size < 48 || r.bytes(4).readUInt32LE(0) !== GGML_MAGIC) throw new GgmlModelError('it does not start with the ggml magic number: not a whisper.cpp model file')
    const [vocab, audioCtx, state, heads, audioLayers, textCtx, textState, textHeads, textLayers, mels, ftype] = Array.from({ length: 11 }, () => r.i32()) as [number, number, number, number, number, number, number, number, number, number, number]
    if (vocab < 51864 || vocab! > 52000) throw new GgmlModelError(`its vocabulary size (${vocab}) is not a Whisper model's (51864 or more)`)
    positive('audio context', audioCtx, 1 << 16)
    positive('audio width', state, 1 << 14)
    positive('audio heads', heads, 256)
    positive('audio layers', audioLayers, 256)
    positive('text context', textCtx, 1 << 16)
    positive('text width', textState, 1 << 14)
    positive('text heads', textHeads, 256)
    positive('text layers', textLayers, 256)
    if (mels !== 80 && mels !== 128) throw new GgmlModelError(`its mel band count (${mels}) is not 80 or 128`)
    if (ftype < 0 || ftype % 1000 > 30) throw new GgmlModelError(`its weight type (${ftype}) is not one ggml knows`)

    const [nMel, nFft] = [r.i32(), r.i32()]
    positive('mel filter count', nMel, 1024)
    positive('FFT size', nFft, 1 << 16)
    r.bytes(nMel * nFft * 4)
    const tokens = r.i32()
    if (tokens < 0 || tokens > vocab) throw new GgmlModelError(`its token count (${tokens}) is larger than its vocabulary (${vocab})`)
    for (let i = 0; i < tokens; i++) r.bytes(r.bytes(4).readUInt32LE(0))

    let tensors = 0
    while (r.pos < r.size) {
      const [dims, nameLength, type] = [r.i32(), r.i32(), r.i32()]
      if (dims < 1 || dims > 4 || nameLength < 1 || nameLength > 256) throw new GgmlModelError(`tensor ${tensors + 1} has a damaged header (at byte ${r.pos - 12})`)
      const shape = Array.from({ length: dims }, () => r.i32())
      const name = r.bytes(nameLength).toString('latin1')
      const size = TYPE_SIZES[type]
      if (!size) throw new GgmlModelError(`tensor ${name} has a type (${type}) whisper.cpp's Whisper models do not use`)
      const count = shape.reduce((a, b) => a * b, 1)
      if (shape.some(n => n <= 0) || shape[0]! % size[1] !== 0) throw new GgmlModelError(`tensor ${name} has a damaged shape (${shape.join('×')})`)
      r.pos += (count / size[1]) * size[0]
      if (r.pos > r.size) throw new GgmlModelError(`it ends inside tensor ${name} (file ${r.size} bytes, ${r.pos} needed): an incomplete copy or download`)
      tensors++
    }
    // whisper.cpp's tensor list: 5 + 15 per encoder layer + 2, then 2 + 24 per decoder layer + 2
    const expected = 11 + 15 * audioLayers + 24 * textLayers
    if (tensors !== expected) throw new GgmlModelError(`it has ${tensors} tensors where a model of ${audioLayers} + ${textLayers} layers has ${expected}: an incomplete or damaged file`)
    return { vocab, audioLayers, textLayers, state, mels, tensors, multilingual: vocab >= 51865 }
  } finally {
    closeSync(fd)
  }
}
