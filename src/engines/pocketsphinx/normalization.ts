/**
 * The live cepstral mean normalization (CMN) of a decoder, put back to where a new decoder starts:
 * the model's `-cmninit` estimate, no frames counted. The library updates it from every utterance and
 * has no call to reset it (`cmn_live_set` also counts 500 frames of the estimate), so a decoder that
 * recognized one recording would hear the next one differently from `pocketsphinx_continuous`, which
 * starts afresh for each file; reopening the decoder instead costs the 1.3 s of loading the model.
 *
 * This writes the three fields of sphinxbase's `cmn_t` through `feat_t.cmn_struct` (and `feat_t.cmn`,
 * which the first utterance given block by block turns from batch to live), at the offsets of
 * the x86-64 layout of sphinxbase d1922b6 (`include/sphinxbase/feat.h`, `cmn.h`), and only after
 * checking them against what they must hold (the cepstrum length twice, and the means equal to
 * `-cmninit` in a decoder that has heard nothing): a library laid out otherwise is left alone
 * (`locate` answers null) and the caller reopens the decoder instead.
 */
import { read, toArrayBuffer, type Pointer } from 'bun:ffi'

const FEAT_CEPSIZE = 16
const FEAT_CMN_TYPE = 68
const FEAT_CMN_STRUCT = 88
const CMN_MEAN = 0
const CMN_SUM = 16
const CMN_NFRAME = 24
const CMN_VECLEN = 28
/** `CMN_BATCH` and `CMN_LIVE` in `cmn_type_t`: the first block-by-block utterance turns batch into live for good */
const BATCH = 1
const LIVE = 2

export interface Normalization {
  feat: Pointer
  cmn: Pointer
  initial: Float32Array
  initialType: number
}

const asPointer = (p: number | bigint): Pointer => Number(p) as Pointer

/** The CMN state behind `feat` in a decoder that has heard nothing yet, or null if the layout does not check out. */
export function locateNormalization(feat: Pointer, cmninit: string | null): Normalization | null {
  if (!cmninit) return null
  const initial = Float32Array.from(cmninit.split(','), Number)
  const cepsize = read.i32(feat, FEAT_CEPSIZE)
  const initialType = read.i32(feat, FEAT_CMN_TYPE)
  if (cepsize !== initial.length || (initialType !== BATCH && initialType !== LIVE)) return null
  const cmnAddress = read.ptr(feat, FEAT_CMN_STRUCT)
  if (!cmnAddress) return null
  const cmn = asPointer(cmnAddress)
  if (read.i32(cmn, CMN_VECLEN) !== cepsize || read.i32(cmn, CMN_NFRAME) !== 0) return null
  const mean = floats(cmn, CMN_MEAN, cepsize)
  if (!mean || mean.some((m, i) => Math.abs(m - initial[i]!) > 1e-3)) return null
  return { feat, cmn, initial, initialType }
}

/** Puts the means back to the model's estimate, forgets the frames counted, and the kind of normalization back to the model's. */
export function resetNormalization(n: Normalization): void {
  floats(n.cmn, CMN_MEAN, n.initial.length)!.set(n.initial)
  floats(n.cmn, CMN_SUM, n.initial.length)!.fill(0)
  int32At(n.cmn, CMN_NFRAME)[0] = 0
  int32At(n.feat, FEAT_CMN_TYPE)[0] = n.initialType
}

function int32At(struct: Pointer, offset: number): Int32Array {
  return new Int32Array(toArrayBuffer(struct, offset, 4))
}

function floats(struct: Pointer, offset: number, length: number): Float32Array | null {
  const address = read.ptr(struct, offset)
  return address ? new Float32Array(toArrayBuffer(asPointer(address), 0, length * 4)) : null
}
