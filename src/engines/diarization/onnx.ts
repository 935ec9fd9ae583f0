/**
 * Reads an ONNX file's top-level structure (onnx.proto's ModelProto) without onnxruntime: the IR
 * version, whether it has a graph, and the metadata_props. Fields are skipped by their length, so a
 * 100 MB model costs a few small reads.
 *
 * Why it exists: sherpa-onnx ends the whole process when a model is wrong instead of throwing — a file
 * that is not ONNX aborts on an uncaught Ort::Exception, and a missing or bad metadata key calls
 * `_Exit(-1)` (macros.h, SHERPA_ONNX_READ_META_DATA). A server must refuse such a file before it
 * hands the path to the addon.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

export class OnnxFormatError extends Error {}

export interface OnnxSummary {
  irVersion: number
  hasGraph: boolean
  metadata: Record<string, string>
}

const MODEL_IR_VERSION = 1
const MODEL_GRAPH = 7
const MODEL_METADATA_PROPS = 14

class FileReader {
  private buf = new Uint8Array(64 * 1024)
  private bufStart = 0
  private bufEnd = 0
  pos = 0

  constructor(private fd: number, readonly size: number) {}

  private byte(): number {
    if (this.pos >= this.size) throw new OnnxFormatError('ends in the middle of a field')
    if (this.pos < this.bufStart || this.pos >= this.bufEnd) {
      this.bufStart = this.pos
      this.bufEnd = this.pos + readSync(this.fd, this.buf, 0, this.buf.length, this.pos)
    }
    return this.buf[this.pos++ - this.bufStart]!
  }

  varint(): number {
    let n = 0
    let scale = 1
    for (let i = 0; i < 10; i++) {
      const b = this.byte()
      n += (b & 0x7f) * scale
      if (b < 0x80) return n
      scale *= 128
    }
    throw new OnnxFormatError('has a malformed number')
  }

  bytes(length: number): Uint8Array {
    if (this.pos + length > this.size) throw new OnnxFormatError('ends in the middle of a field')
    const out = new Uint8Array(length)
    readSync(this.fd, out, 0, length, this.pos)
    this.pos += length
    return out
  }

  skip(length: number) {
    if (this.pos + length > this.size) throw new OnnxFormatError('ends in the middle of a field')
    this.pos += length
  }
}

/** A StringStringEntryProto: key = 1, value = 2. */
function readEntry(bytes: Uint8Array): [string, string] {
  const text = new TextDecoder('utf-8', { fatal: true })
  let key = ''
  let value = ''
  let i = 0
  const varint = () => {
    let n = 0
    let scale = 1
    for (;;) {
      if (i >= bytes.length) throw new OnnxFormatError('has a malformed metadata entry')
      const b = bytes[i++]!
      n += (b & 0x7f) * scale
      if (b < 0x80) return n
      scale *= 128
    }
  }
  while (i < bytes.length) {
    const tag = varint()
    if ((tag & 7) !== 2) throw new OnnxFormatError('has a malformed metadata entry')
    const length = varint()
    if (i + length > bytes.length) throw new OnnxFormatError('has a malformed metadata entry')
    const s = text.decode(bytes.subarray(i, i + length))
    i += length
    if (tag >>> 3 === 1) key = s
    else if (tag >>> 3 === 2) value = s
  }
  return [key, value]
}

/** Reads the ModelProto's top level; throws OnnxFormatError when the file is not an ONNX model. */
export function readOnnxSummary(path: string): OnnxSummary {
  const fd = openSync(path, 'r')
  try {
    const r = new FileReader(fd, fstatSync(fd).size)
    if (r.size === 0) throw new OnnxFormatError('is empty')
    const summary: OnnxSummary = { irVersion: 0, hasGraph: false, metadata: {} }
    while (r.pos < r.size) {
      const tag = r.varint()
      const field = Math.floor(tag / 8)
      const wire = tag & 7
      if (field === 0 || field > 100) throw new OnnxFormatError(`has no ONNX field ${field}`)
      if (wire === 0) {
        const v = r.varint()
        if (field === MODEL_IR_VERSION) summary.irVersion = v
      } else if (wire === 2) {
        const length = r.varint()
        if (field === MODEL_METADATA_PROPS) {
          const [k, v] = readEntry(r.bytes(length))
          summary.metadata[k] = v
        } else {
          if (field === MODEL_GRAPH) summary.hasGraph = true
          r.skip(length)
        }
      } else if (wire === 1) r.skip(8)
      else if (wire === 5) r.skip(4)
      else throw new OnnxFormatError(`has a field of wire type ${wire}, which ONNX does not use`)
    }
    if (summary.irVersion < 1 || !summary.hasGraph) throw new OnnxFormatError('has no IR version or no graph')
    return summary
  } finally {
    closeSync(fd)
  }
}
