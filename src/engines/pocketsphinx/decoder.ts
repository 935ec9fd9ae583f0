/**
 * One PocketSphinx decoder in this process, through its C library (native.ts): the acoustic model and
 * dictionary loaded once (about 0.4 s; 1 s more with the language model), then as many utterances as
 * the caller likes, each `start()`, `process(samples)` (as often as audio arrives; `partial()` says
 * what it has heard so far), `end()`, then `hypothesis()` and `segments()` (each word with its frames
 * and posterior probability). A grammar (`setGrammar`) or the language model (`useSearch`) says what
 * may be heard.
 *
 * Native memory is freed by `free()` (or a `using` block); a decoder nobody freed is freed when it is
 * collected, as a backstop. Every pointer the library returns is checked: a failure is an exception
 * naming what went wrong, never a crash. Calls are synchronous and take CPU time in proportion to the
 * audio: run long work in a worker thread.
 */
import { CString, ptr, type Pointer } from 'bun:ffi'
import { statSync } from 'node:fs'
import { LIBRARY_INSTALL_HINT, loadPocketsphinxNative, type PocketsphinxNative } from './native'
import { locateNormalization, resetNormalization, type Normalization } from './normalization'

const MODEL_DIR = '/usr/share/pocketsphinx/model/en-us'

/** Debian's `pocketsphinx-en-us` model, the one the `pocketsphinx_continuous` adapter uses. */
export const POCKETSPHINX_MODEL = {
  hmm: `${MODEL_DIR}/en-us`,
  lm: `${MODEL_DIR}/en-us.lm.bin`,
  dict: `${MODEL_DIR}/cmudict-en-us.dict`,
} as const

/** Frames a second (the library's default `-frate`): a segment's frames are hundredths of a second. */
export const FRAME_RATE = 100

export interface DecoderOptions {
  /** acoustic model directory */
  hmm?: string
  /** pronunciation dictionary */
  dict?: string
  /** language model, loaded as the search named `lm`; null (the default) loads none, for grammars only */
  lm?: string | null
  /**
   * The library's voice-activity detector, which drops the frames it takes for silence (default off:
   * then a segment's frames count every 10 ms of the audio given, which alignment needs).
   */
  vad?: boolean
  /** more of the library's options, e.g. `{ '-cmn': 'live' }` for live audio */
  settings?: Record<string, string>
  /** a file the library writes its log to (off by default) */
  logFile?: string
}

/** A word the decoder heard (or a filler: `<sil>`, `<s>`, `[NOISE]`, …), times in seconds from the utterance's start. */
export interface DecodedWord {
  /** as in the dictionary: an alternative pronunciation keeps its mark, e.g. `the(2)` */
  word: string
  start: number
  end: number
  /** first and last frame (10 ms each), inclusive */
  startFrame: number
  endFrame: number
  /** posterior probability (0 to 1) from the word lattice; 1 when the search made no lattice */
  posterior: number
  /** the library's acoustic score (log domain, larger is better; scaled per search) */
  acousticScore: number
}

/** PocketSphinx cannot run here: the message names what is missing and how to install it. */
export class PocketsphinxUnavailableError extends Error {}

/** A call into the library failed (a grammar it cannot build, audio it refused, a call out of order). */
export class PocketsphinxError extends Error {}

type State = 'idle' | 'started' | 'ended' | 'freed'

const collected = new FinalizationRegistry<{ native: PocketsphinxNative; decoder: Pointer }>(held => {
  held.native.ps.ps_free(held.decoder)
})

/** A NUL-terminated copy of `s` for the library; a string with a NUL of its own is refused. */
function cString(s: string): Buffer {
  if (s.includes('\0')) throw new PocketsphinxError('text for PocketSphinx cannot contain a NUL character')
  return Buffer.from(`${s}\0`, 'utf8')
}

/** A pointer the library returned, as bun:ffi types it (a number; a bigint only past 2^53, which no x86-64 address is). */
function pointer(p: Pointer | bigint | null): Pointer | null {
  return typeof p === 'bigint' ? (Number(p) as Pointer) : p
}

function readCString(p: Pointer | null): string | null {
  return p ? new CString(p).toString() : null
}

function missingFile(path: string): boolean {
  try {
    return !statSync(path).isFile()
  } catch {
    return true
  }
}

/**
 * What keeps PocketSphinx's library and model from running here, or null when they can: cheap
 * (opens the library once, then a few stats), so callers may ask before every use.
 */
export function pocketsphinxLibraryMissing(opts: DecoderOptions = {}): string | null {
  const native = loadPocketsphinxNative()
  if ('missing' in native) return native.missing
  const hmm = opts.hmm ?? POCKETSPHINX_MODEL.hmm
  const dict = opts.dict ?? POCKETSPHINX_MODEL.dict
  if (missingFile(`${hmm}/mdef`)) return `acoustic model not found at ${hmm}`
  if (missingFile(dict)) return `dictionary not found at ${dict}`
  if (opts.lm && missingFile(opts.lm)) return `language model not found at ${opts.lm}`
  return null
}

export class PocketsphinxDecoder {
  #native: PocketsphinxNative
  #decoder: Pointer | null
  #logmath: Pointer
  #state: State = 'idle'
  /** where the decoder's feature normalization lives, to start each stream afresh (null: not found) */
  #normalization: Normalization | null

  private constructor(native: PocketsphinxNative, decoder: Pointer, logmath: Pointer) {
    this.#native = native
    this.#decoder = decoder
    this.#logmath = logmath
    collected.register(this, { native, decoder }, this)
    const feat = pointer(native.ps.ps_get_feat(decoder))
    const config = pointer(native.ps.ps_get_config(decoder))
    const cmninit = config ? readCString(pointer(native.base.cmd_ln_str_r(config, cString('-cmninit')))) : null
    this.#normalization = feat ? locateNormalization(feat, cmninit) : null
  }

  /** Loads the model; throws PocketsphinxUnavailableError naming what is missing. */
  static open(opts: DecoderOptions = {}): PocketsphinxDecoder {
    const missing = pocketsphinxLibraryMissing(opts)
    if (missing) {
      throw new PocketsphinxUnavailableError(`PocketSphinx is unavailable: ${missing}; install it with \`${LIBRARY_INSTALL_HINT}\``)
    }
    const native = loadPocketsphinxNative() as PocketsphinxNative
    const { base, ps } = native
    const args: string[] = [
      '-hmm', opts.hmm ?? POCKETSPHINX_MODEL.hmm,
      '-dict', opts.dict ?? POCKETSPHINX_MODEL.dict,
      '-remove_silence', opts.vad ? 'yes' : 'no',
      ...(opts.lm ? ['-lm', opts.lm] : []),
      ...(opts.logFile ? ['-logfn', opts.logFile] : []),
      ...Object.entries(opts.settings ?? {}).flat(),
    ]
    const strings = args.map(cString)
    const argv = new BigUint64Array(strings.map(s => BigInt(ptr(s))))
    const config = pointer(base.cmd_ln_parse_r(null, ps.ps_args(), args.length, argv, 1))
    if (!config) throw new PocketsphinxError(`PocketSphinx refused its settings (${args.join(' ')}); check the option names and values`)
    // the decoder keeps its own reference to the configuration
    const decoder = pointer(ps.ps_init(config))
    base.cmd_ln_free_r(config)
    if (!decoder) throw new PocketsphinxUnavailableError(`PocketSphinx could not load its model from ${args[1]} and ${args[3]}; reinstall it with \`${LIBRARY_INSTALL_HINT}\``)
    const logmath = pointer(ps.ps_get_logmath(decoder))
    if (!logmath) {
      ps.ps_free(decoder)
      throw new PocketsphinxError('PocketSphinx gave no log-math table')
    }
    return new PocketsphinxDecoder(native, decoder, logmath)
  }

  #live(): Pointer {
    if (!this.#decoder) throw new PocketsphinxError('this PocketSphinx decoder was freed; open a new one')
    return this.#decoder
  }

  /** The pronunciation of `word` (phones separated by spaces), or null when the dictionary lacks it. */
  pronunciation(word: string): string | null {
    const phones = pointer(this.#native.ps.ps_lookup_word(this.#live(), cString(word)))
    if (!phones) return null
    try {
      return readCString(phones)
    } finally {
      this.#native.base.ckd_free(phones)
    }
  }

  /**
   * Adds `word` to the dictionary with `phones` (the model's phones, e.g. `HH AH L OW`). With
   * `update`, searches already made learn it (slow with a language model: its tree is rebuilt);
   * grammars set afterwards see it either way.
   */
  addWord(word: string, phones: string, update = false): void {
    const id = this.#native.ps.ps_add_word(this.#live(), cString(word), cString(phones), update ? 1 : 0)
    if (id < 0) throw new PocketsphinxError(`PocketSphinx could not add the word '${word}' with the phones '${phones}' (already there, or a phone the model lacks)`)
  }

  /**
   * Changes a numeric setting of the searches made after this call (`-beam`, `-wbeam`, `-pbeam`,
   * `-wip`, …); searches already made keep theirs.
   */
  setSearchSetting(name: string, value: number): void {
    this.#idle('change a setting')
    const config = pointer(this.#native.ps.ps_get_config(this.#live()))
    if (!config || this.#native.base.cmd_ln_exists_r(config, cString(name)) === 0) {
      throw new PocketsphinxError(`PocketSphinx has no setting named '${name}'`)
    }
    this.#native.base.cmd_ln_set_float_r(config, cString(name), value)
  }

  /** Makes a search from a JSGF grammar, named `name`, and uses it for the next utterances. */
  setGrammar(name: string, jsgf: string): void {
    this.#idle('set a grammar')
    const decoder = this.#live()
    if (this.#native.ps.ps_set_jsgf_string(decoder, cString(name), cString(jsgf)) < 0) {
      throw new PocketsphinxError('PocketSphinx could not build the grammar (a syntax error, or a word the dictionary lacks)')
    }
    this.useSearch(name)
  }

  /** Uses a search made before: a grammar's name, or `lm` for the language model. */
  useSearch(name: string): void {
    this.#idle('change the search')
    if (this.#native.ps.ps_set_search(this.#live(), cString(name)) < 0) {
      throw new PocketsphinxError(`PocketSphinx has no search named '${name}'`)
    }
  }

  #idle(what: string): void {
    if (this.#state === 'started') throw new PocketsphinxError(`cannot ${what} during an utterance; end() it first`)
  }

  /**
   * Starts a new recording: times count from its first sample again (with `vad`, each utterance's
   * times otherwise count from the first audio this decoder was given), the noise estimate starts
   * afresh, and so does the feature normalization (normalization.ts) where this library's layout
   * allows; returns false when it does not, and the recording would be heard as a continuation.
   */
  startStream(): boolean {
    this.#idle('start a stream')
    this.#native.ps.ps_start_stream(this.#live())
    if (!this.#normalization) return false
    resetNormalization(this.#normalization)
    return true
  }

  start(): void {
    this.#idle('start an utterance')
    if (this.#native.ps.ps_start_utt(this.#live()) < 0) throw new PocketsphinxError('PocketSphinx could not start an utterance (no search chosen?)')
    this.#state = 'started'
  }

  /**
   * Decodes more of the utterance: 16 kHz mono 16-bit samples. `whole` says these samples are the
   * whole utterance (one call between start() and end()), which lets the library normalize the
   * features over all of it at once (better for a recording than the running estimate).
   */
  process(samples: Int16Array, whole = false): void {
    if (this.#state !== 'started') throw new PocketsphinxError('process() needs an utterance: call start() first')
    if (samples.length === 0) return
    if (this.#native.ps.ps_process_raw(this.#live(), samples, samples.length, 0, whole ? 1 : 0) < 0) {
      throw new PocketsphinxError('PocketSphinx could not process the audio')
    }
  }

  /** What the decoder has heard so far in this utterance (or heard in the last one), or null. */
  partial(): string | null {
    if (this.#state === 'idle') return null
    const text = readCString(pointer(this.#native.ps.ps_get_hyp(this.#live(), null)))
    return text === '' ? null : text
  }

  /** Whether the voice-activity detector (the `vad` option) hears speech now. */
  inSpeech(): boolean {
    return this.#native.ps.ps_get_in_speech(this.#live()) !== 0
  }

  end(): void {
    if (this.#state !== 'started') throw new PocketsphinxError('end() needs an utterance: call start() first')
    this.#state = 'ended'
    if (this.#native.ps.ps_end_utt(this.#live()) < 0) throw new PocketsphinxError('PocketSphinx could not finish the utterance')
  }

  /** The final hypothesis of the last utterance, or null (nothing heard, or a grammar it could not match). */
  hypothesis(): string | null {
    return this.#state === 'ended' ? this.partial() : null
  }

  /**
   * The words of the best path with their times and posteriors, fillers included; empty when
   * nothing was heard or the grammar could not be matched to the end of the audio.
   */
  segments(): DecodedWord[] {
    if (this.#state !== 'ended') return []
    const { ps, base } = this.#native
    const startFrame = new Int32Array(1)
    const endFrame = new Int32Array(1)
    const acoustic = new Int32Array(1)
    const words: DecodedWord[] = []
    let seg = pointer(ps.ps_seg_iter(this.#live()))
    try {
      while (seg) {
        const word = readCString(pointer(ps.ps_seg_word(seg)))
        ps.ps_seg_frames(seg, startFrame, endFrame)
        const logPosterior = ps.ps_seg_prob(seg, acoustic, null, null)
        if (word !== null) {
          words.push({
            word,
            start: startFrame[0]! / FRAME_RATE,
            end: (endFrame[0]! + 1) / FRAME_RATE,
            startFrame: startFrame[0]!,
            endFrame: endFrame[0]!,
            posterior: Math.min(1, base.logmath_exp(this.#logmath, logPosterior)),
            acousticScore: acoustic[0]!,
          })
        }
        seg = pointer(ps.ps_seg_next(seg))
      }
    } finally {
      // the iterator frees itself at its end; only an early exit leaves one to free
      if (seg) ps.ps_seg_free(seg)
    }
    return words
  }

  /** Frees the decoder's native memory now; later calls throw. Safe to call twice. */
  free(): void {
    if (!this.#decoder) return
    collected.unregister(this)
    this.#native.ps.ps_free(this.#decoder)
    this.#decoder = null
    this.#state = 'freed'
  }

  [Symbol.dispose](): void {
    this.free()
  }
}
