/**
 * What a sandbox key's stream hears, whatever it is sent: the SPEC's fixed sandbox transcript, word by
 * word at its own times as the audio received reaches them (so at real-time pace for a client that sends
 * in real time), one turn per sentence, over and over for a longer stream. No engine runs and nothing
 * is charged; the note at the end is the fixed sandbox note.
 */
import { SANDBOX_DURATION_SECONDS, SANDBOX_TIMED_SEGMENTS } from '../processing/sandbox'
import type { LiveRecognizer, LiveRecognizerFactory, RecognizerEvent } from './recognizer'

export function sandboxRecognizers(): LiveRecognizerFactory {
  return (config, emit: (e: RecognizerEvent) => void): LiveRecognizer => {
    let samples = 0
    /** turns heard so far across the repetitions; words of the current one */
    let turn = 0
    let heard = 0
    let open = false
    const segment = (n: number) => SANDBOX_TIMED_SEGMENTS[n % SANDBOX_TIMED_SEGMENTS.length]!
    const offset = (n: number) => Math.floor(n / SANDBOX_TIMED_SEGMENTS.length) * SANDBOX_DURATION_SECONDS
    const text = () => segment(turn).words.slice(0, heard).map(w => w.word).join(' ')

    function end(at: number) {
      const seg = segment(turn)
      if (open) emit({ kind: 'speech_stopped', turn, at })
      emit({ kind: 'final', turn, text: heard === seg.words.length ? seg.text : text(), start: offset(turn) + seg.start, end: at })
      turn++
      heard = 0
      open = false
    }

    function advance() {
      const t = samples / config.sampleRate
      for (;;) {
        const seg = segment(turn)
        const base = offset(turn)
        while (heard < seg.words.length && base + seg.words[heard]!.end <= t) {
          if (!open) emit({ kind: 'speech_started', turn, at: base + seg.start })
          open = true
          heard++
          emit({ kind: 'partial', turn, text: text() })
        }
        if (heard < seg.words.length) return
        end(base + seg.end)
      }
    }

    return {
      push(pcm) {
        samples += pcm.byteLength / 2
        advance()
      },
      commit: () => end(samples / config.sampleRate),
      clear() {
        heard = 0
        open = false
      },
      async close() {
        if (heard > 0) end(samples / config.sampleRate)
      },
    }
  }
}
