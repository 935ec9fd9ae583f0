/**
 * Sign-in timing: a wrong password for an existing account against an email no account has. Both
 * should cost one argon2id verification, so their times should be alike and neither should reveal
 * which emails exist. test/modules/web/signin.test.ts checks that the same work is done (one verification
 * with the same cost parameters); this prints how long it takes.
 *
 * Run: bun run bench/signin-timing.ts   (RUNS=20 by default)
 * It reports and exits 0; it exits 1 only when it could not measure.
 */
import { cpus } from 'node:os'
import { createTestApp } from '../test/helpers/app'

const RUNS = Math.max(1, Number(process.env.RUNS ?? 20))
const EMAIL = 'ada@example.com'

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2
}

async function main() {
  const t = createTestApp()
  const web = t.services.web
  await web.setPassword(EMAIL, 'correct horse battery staple')

  // every attempt from its own client address, so the brute-force limits never step in
  let n = 0
  const attempt = async (email: string) => {
    const started = performance.now()
    const r = await web.signIn(email, 'wrong password', `bench-${++n}`)
    if (r.ok || r.reason !== 'invalid') throw new Error(`expected a refused sign-in, got ${JSON.stringify(r)}`)
    return performance.now() - started
  }
  await attempt('warm-up@example.com') // computes the dummy hash once
  await attempt(EMAIL)

  const known: number[] = []
  const unknown: number[] = []
  // interleaved, so a slower moment of the machine hits both
  for (let i = 0; i < RUNS; i++) {
    known.push(await attempt(EMAIL))
    unknown.push(await attempt(`nobody-${i}@example.com`))
  }
  const row = (name: string, xs: number[]) =>
    `${name.padEnd(28)} median ${median(xs).toFixed(1).padStart(7)} ms   min ${Math.min(...xs).toFixed(1).padStart(7)} ms   max ${Math.max(...xs).toFixed(1).padStart(7)} ms`
  console.log(`sign-in timing, ${RUNS} runs each, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Bun ${Bun.version}`)
  console.log(row('existing email, wrong pw', known))
  console.log(row('unknown email', unknown))
  console.log(`ratio unknown/known (medians): ${(median(unknown) / median(known)).toFixed(2)} (1.00 = indistinguishable)`)
}

main().catch(err => {
  console.error(`could not measure: ${err instanceof Error ? err.message : String(err)}`)
  process.exit(1)
})
