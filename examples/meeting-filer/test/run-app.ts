import { resolve } from 'node:path'

const APP_DIR = resolve(import.meta.dir, '..')

/** Runs the app's command line (`bun run src/index.ts …`) against the notesvc at `url`. */
export async function runApp(args: string[], env: { url: string; apiKey: string }) {
  // asynchronous on purpose: the kit's notesvc runs in the test's process and must go on answering
  const child = Bun.spawn([process.execPath, 'run', 'src/index.ts', ...args], {
    cwd: APP_DIR,
    env: { ...process.env, NOTESVC_URL: env.url, NOTESVC_API_KEY: env.apiKey },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { stdout, stderr, exitCode }
}
