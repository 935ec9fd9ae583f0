/**
 * A stand-in speaker-embedding model, for trying a segmentation model on its own (model-trial-child.ts):
 * sherpa-onnx loads a segmentation model only together with an embedding model, so a segmentation file
 * imported before its partner is tried beside this one. Its graph is one ReduceMean (the mean of the
 * 80 fbank features over time: input `x` (N, T, 80), output (N, 80)), with the metadata sherpa-onnx
 * reads for a wespeaker model; it is never used to diarize.
 *
 * Written as protobuf bytes here (onnx/onnx.proto field numbers) rather than shipped as a file, so the
 * binary carries no model; a protobuf library would be a dependency for some 40 bytes of writing.
 */
const FLOAT = 1
const ATTRIBUTE_INTS = 7
const ATTRIBUTE_INT = 2

function varint(n: number): number[] {
  const out: number[] = []
  do {
    let b = n % 128
    n = Math.floor(n / 128)
    if (n > 0) b |= 0x80
    out.push(b)
  } while (n > 0)
  return out
}

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let at = 0
  for (const p of parts) {
    out.set(p, at)
    at += p.length
  }
  return out
}
const int = (field: number, n: number) => new Uint8Array([...varint(field * 8), ...varint(n)])
const bytes = (field: number, b: Uint8Array) => concat([new Uint8Array([...varint(field * 8 + 2), ...varint(b.length)]), b])
const str = (field: number, s: string) => bytes(field, new TextEncoder().encode(s))
const msg = (field: number, ...fields: Uint8Array[]) => bytes(field, concat(fields))

/** a float tensor's value info (graph input 11, output 12) with named or fixed dimensions */
function valueInfo(field: 11 | 12, name: string, dims: (number | string)[]): Uint8Array {
  const shape = dims.map(d => msg(1, typeof d === 'number' ? int(1, d) : str(2, d)))
  return msg(field, str(1, name), msg(2, msg(1, int(1, FLOAT), msg(2, ...shape))))
}

/** The stand-in model's bytes. */
export function standInEmbeddingModel(): Uint8Array {
  const metadata: Record<string, string> = {
    framework: 'wespeaker', output_dim: '80', sample_rate: '16000', normalize_samples: '0',
    language: 'English', feature_normalize_type: '', comment: 'notesvc stand-in: the mean of the features, never used to diarize',
  }
  const reduceMean = msg(1, str(1, 'x'), str(2, 'embedding'), str(3, 'mean'), str(4, 'ReduceMean'),
    msg(5, str(1, 'axes'), int(8, 1), int(20, ATTRIBUTE_INTS)),
    msg(5, str(1, 'keepdims'), int(3, 0), int(20, ATTRIBUTE_INT)))
  return concat([
    int(1, 8), // ir_version
    str(2, 'notesvc'),
    msg(7, reduceMean, str(2, 'stand-in'), valueInfo(11, 'x', ['N', 'T', 80]), valueInfo(12, 'embedding', ['N', 80])),
    msg(8, str(1, ''), int(2, 13)), // opset 13: ReduceMean's axes as an attribute
    ...Object.entries(metadata).map(([k, v]) => msg(14, str(1, k), str(2, v))),
  ])
}
