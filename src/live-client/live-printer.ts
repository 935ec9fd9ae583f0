/**
 * What `transcribe --live` shows: each final line with its times on stdout (the transcript alone, so
 * `> file` keeps it), and on stderr the partial text of the turn being heard and the stream's notices.
 * On a terminal the partial is rewritten in place (carriage return, clear the line), cut to the
 * terminal's width so it never wraps; elsewhere each partial is a plain line of its own.
 */

export interface Terminal {
  write(text: string): void
  isTTY: boolean
  /** the terminal's width, when it is one */
  columns?: number
}

const CLEAR_LINE = '\r\x1b[2K'

/** Seconds as `mm:ss.s`, or `h:mm:ss.s` from an hour on. */
export function clockTime(seconds: number): string {
  const tenths = Math.max(0, Math.round(seconds * 10))
  const h = Math.floor(tenths / 36_000)
  const m = Math.floor((tenths % 36_000) / 600)
  const s = (tenths % 600) / 10
  const mmss = `${String(m).padStart(2, '0')}:${s.toFixed(1).padStart(4, '0')}`
  return h > 0 ? `${h}:${mmss}` : mmss
}

export function createLivePrinter(out: Terminal, err: Terminal) {
  /** a partial is on the terminal's last line, to be cleared before anything else is written */
  let partialShown = false
  /** the last partial shown: a delta and notesvc's whole partial often say the same */
  let lastPartial = ''

  const clearPartial = () => {
    if (partialShown) err.write(CLEAR_LINE)
    partialShown = false
  }

  return {
    /** the turn's text so far (provisional) */
    partial(text: string) {
      if (!text.trim() || text === lastPartial) return
      lastPartial = text
      if (!err.isTTY) return err.write(`… ${text}\n`)
      const width = Math.max(20, (err.columns ?? 80) - 1)
      const shown = text.length + 2 > width ? `…${text.slice(text.length - (width - 3))}` : text
      err.write(`${CLEAR_LINE}… ${shown}`)
      partialShown = true
    },
    /** a turn's final text; `start`/`end` in seconds of the stream's audio when the server said */
    final(text: string, start: number | null, end: number | null) {
      clearPartial()
      lastPartial = ''
      if (!text.trim()) return
      const times = start !== null && end !== null ? `[${clockTime(start)} → ${clockTime(end)}] ` : ''
      out.write(`${times}${text}\n`)
    },
    /** a notice (connected, the note, what to do next): its own line on stderr */
    notice(line: string) {
      clearPartial()
      err.write(`${line}\n`)
    },
  }
}

export type LivePrinter = ReturnType<typeof createLivePrinter>
