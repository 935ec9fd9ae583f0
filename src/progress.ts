/** How amounts are shown: megabytes (downloads), whole rows (copies of tables) or seconds of a recording (transcription). */
const UNITS = {
  bytes: { amount: (n: number) => (n / 1e6).toFixed(1), name: 'MB' },
  rows: { amount: (n: number) => String(Math.round(n)), name: 'rows' },
  seconds: { amount: (n: number) => String(Math.round(n)), name: 's' },
}

/**
 * A progress bar on stderr for long CLI actions: redrawn in place on a terminal, a line every 10%
 * otherwise (logs and CI), so stdout keeps only the result.
 */
export function createProgressBar(label: string, write: (s: string) => void = s => process.stderr.write(s), isTty = Boolean(process.stderr.isTTY), unit: keyof typeof UNITS = 'bytes') {
  const started = performance.now()
  let lastDecile = -1
  let drawn = false
  const { amount, name } = UNITS[unit]
  return {
    update({ received, total }: { received: number; total: number | null }) {
      const seconds = (performance.now() - started) / 1000
      const rate = seconds > 0 ? `${amount(received / seconds)} ${name}/s` : ''
      if (total) {
        const fraction = Math.min(1, received / total)
        const width = 30
        const bar = '#'.repeat(Math.round(fraction * width)).padEnd(width, '.')
        const line = `${label} ${(fraction * 100).toFixed(0).padStart(3)}% [${bar}] ${amount(received)}/${amount(total)} ${name} ${rate}`
        if (isTty) {
          write(`\r${line}`)
          drawn = true
        } else if (Math.floor(fraction * 10) > lastDecile) {
          lastDecile = Math.floor(fraction * 10)
          write(`${line}\n`)
        }
      } else if (isTty) {
        write(`\r${label} ${amount(received)} ${name} ${rate}`)
        drawn = true
      }
    },
    done() {
      if (drawn) write('\n')
      drawn = false
    },
  }
}
