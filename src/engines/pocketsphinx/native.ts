/**
 * PocketSphinx's C library through `bun:ffi`: Debian's `libpocketsphinx3` and `libsphinxbase3`
 * (0.8+5prealpha+1), opened by their sonames on first use. The signatures are those of the matching
 * sources (cmusphinx/pocketsphinx 584be6e `include/pocketsphinx.h`, `ps_search.h`; sphinxbase d1922b6
 * `cmd_ln.h`, `err.h`, `logmath.h`, `ckd_alloc.h`); Debian installs no headers. Only decoder.ts calls
 * these: it checks every pointer they return.
 *
 * Configuration goes through `cmd_ln_parse_r` (an argv array), not the variadic `cmd_ln_init`, which
 * an FFI call cannot describe. Strings go in as NUL-terminated buffers (`ptr`).
 */
import { dlopen, FFIType } from 'bun:ffi'

const POCKETSPHINX_LIBRARY = 'libpocketsphinx.so.3'
const SPHINXBASE_LIBRARY = 'libsphinxbase.so.3'
export const LIBRARY_INSTALL_HINT = 'apt-get install libpocketsphinx3 pocketsphinx-en-us'

const { ptr, i32, u64, f64 } = FFIType
const ptrOut = ptr
const none = FFIType.void

const sphinxbaseSymbols = {
  cmd_ln_parse_r: { args: [ptr, ptr, i32, ptr, i32], returns: ptr },
  cmd_ln_free_r: { args: [ptr], returns: i32 },
  cmd_ln_set_float_r: { args: [ptr, ptr, f64], returns: none },
  cmd_ln_exists_r: { args: [ptr, ptr], returns: i32 },
  cmd_ln_str_r: { args: [ptr, ptr], returns: ptr },
  err_set_logfp: { args: [ptr], returns: none },
  ckd_free: { args: [ptr], returns: none },
  logmath_exp: { args: [ptr, i32], returns: f64 },
} as const

const pocketsphinxSymbols = {
  ps_args: { args: [], returns: ptr },
  ps_init: { args: [ptr], returns: ptr },
  ps_free: { args: [ptr], returns: i32 },
  ps_get_logmath: { args: [ptr], returns: ptr },
  ps_get_config: { args: [ptr], returns: ptr },
  ps_get_feat: { args: [ptr], returns: ptr },
  ps_add_word: { args: [ptr, ptr, ptr, i32], returns: i32 },
  /** a phone string the caller frees with ckd_free, or null for a word not in the dictionary */
  ps_lookup_word: { args: [ptr, ptr], returns: ptr },
  ps_set_jsgf_string: { args: [ptr, ptr, ptr], returns: i32 },
  ps_set_search: { args: [ptr, ptr], returns: i32 },
  ps_start_stream: { args: [ptr], returns: i32 },
  ps_start_utt: { args: [ptr], returns: i32 },
  /** (decoder, int16 samples, n_samples, no_search, full_utt) → frames searched, or < 0 */
  ps_process_raw: { args: [ptr, ptr, u64, i32, i32], returns: i32 },
  ps_end_utt: { args: [ptr], returns: i32 },
  ps_get_in_speech: { args: [ptr], returns: FFIType.u8 },
  /** the hypothesis, owned by the decoder (valid until the next call that decodes) */
  ps_get_hyp: { args: [ptr, ptrOut], returns: ptr },
  ps_seg_iter: { args: [ptr], returns: ptr },
  /** the next segment, or null once the iterator is done (it then frees itself) */
  ps_seg_next: { args: [ptr], returns: ptr },
  ps_seg_word: { args: [ptr], returns: ptr },
  ps_seg_frames: { args: [ptr, ptrOut, ptrOut], returns: none },
  /** the posterior (log base of logmath), and through the pointers acoustic, language and back-off scores */
  ps_seg_prob: { args: [ptr, ptrOut, ptrOut, ptrOut], returns: i32 },
  ps_seg_free: { args: [ptr], returns: none },
} as const

type Sphinxbase = ReturnType<typeof dlopen<typeof sphinxbaseSymbols>>['symbols']
type Pocketsphinx = ReturnType<typeof dlopen<typeof pocketsphinxSymbols>>['symbols']
export interface PocketsphinxNative {
  base: Sphinxbase
  ps: Pocketsphinx
}

let loaded: PocketsphinxNative | { missing: string } | null = null

/**
 * The two libraries, opened once per process (later calls return the same answer), or why they could
 * not be. The library's own log is switched off: it would write several hundred lines to stderr for
 * each decoder (a decoder's `logFile` option turns it back on, into that file); failures are
 * reported by return values, which decoder.ts turns into messages.
 */
export function loadPocketsphinxNative(): PocketsphinxNative | { missing: string } {
  if (loaded) return loaded
  try {
    const base = dlopen(SPHINXBASE_LIBRARY, sphinxbaseSymbols).symbols
    const ps = dlopen(POCKETSPHINX_LIBRARY, pocketsphinxSymbols).symbols
    base.err_set_logfp(null)
    loaded = { base, ps }
  } catch (err) {
    loaded = { missing: `the PocketSphinx library could not be loaded (${(err as Error).message.split('\n')[0]})` }
  }
  return loaded
}
