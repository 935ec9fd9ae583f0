/**
 * Diarization model files tried in a child process before this process loads them (issue 29, item
 * 10c). checkDiarizationModel reads a file's metadata, which is what sherpa-onnx ends the process on
 * when it is missing; a file with sound metadata and a broken graph (an operator onnxruntime does not
 * have, tensors that do not fit) passes it, and sherpa-onnx then aborts the process that loads it:
 * the whole server. So each file is first loaded and run by a child (model-trial-child.ts) at
 * `models import` and `models pull`, and at the engine's first load in serve; a child that dies says
 * which file it died on and what onnxruntime said, and nothing here dies with it.
 *
 * Results are kept per file (path, size, modification time), so serve tries each version of a file once.
 */
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { isCompiled } from '../../command-name'
import { MODEL_TRIAL_COMMAND } from './model-trial-child'
import { DiarizationModelError, type DiarizationModelRole } from './models'

/** How long a trial may take: loading a real model and running 12 s of audio takes a few seconds. */
const TRIAL_TIMEOUT_MS = 120_000

const tried = new Map<string, Promise<void>>()
/** the message of each trial that failed, by the files' identity */
const refused = new Map<string, string>()

function identity(files: Partial<Record<DiarizationModelRole, string>>): string {
  return Object.entries(files).map(([role, path]) => {
    const st = statSync(path)
    return `${role}=${path}:${st.size}:${st.mtimeMs}`
  }).sort().join('|')
}

/** The command that runs the child: the script under bun from source, the binary itself when compiled. */
function trialCommand(args: string[]): string[] {
  if (isCompiled) return [process.execPath, MODEL_TRIAL_COMMAND, ...args]
  return [process.execPath, join(import.meta.dir, 'model-trial-child.ts'), ...args]
}

/** What onnxruntime or sherpa-onnx said before the child died: the lines that say why, shortened. */
function reasonIn(stderr: string): string {
  const lines = stderr.split('\n').map(l => l.trim()).filter(Boolean)
  const what = lines.find(l => l.startsWith('what():'))
  const telling = what ? [what.replace(/^what\(\):\s*/, '')] : lines.filter(l => /failed|error|exception|invalid/i.test(l) && !/bun\.report|Bun has crashed|panic/i.test(l))
  return (telling.length ? telling : lines.slice(-2)).join(' ').slice(0, 500)
}

async function runTrial(files: Partial<Record<DiarizationModelRole, string>>): Promise<void> {
  const started = performance.now()
  const proc = Bun.spawn(trialCommand(Object.entries(files).map(([role, path]) => `${role}=${path}`)), {
    stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', timeout: TRIAL_TIMEOUT_MS, killSignal: 'SIGKILL',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  const said = stdout.split('\n').filter(Boolean)
  if (code === 0 && said.at(-1) === 'ok') return
  const role = (said.findLast(l => l.startsWith('loading '))?.slice('loading '.length) ?? Object.keys(files)[0]) as DiarizationModelRole
  const path = files[role] ?? Object.values(files)[0]!
  const how = performance.now() - started >= TRIAL_TIMEOUT_MS
    ? `did not finish loading and running it within ${TRIAL_TIMEOUT_MS / 1000} s`
    : proc.signalCode ? `ended the process that loaded it (${proc.signalCode})` : `failed to load it (exit ${code})`
  const why = reasonIn(stderr)
  throw new DiarizationModelError(`sherpa-onnx ${how}: ${path} is not ${role === 'embedding' ? 'an' : 'a'} ${role} model it can run${why ? ` (${why})` : ''}`)
}

/**
 * Loads and runs `files` in a child process; throws DiarizationModelError naming the file that
 * failed and what onnxruntime said. A file given alone is tried alone (a segmentation model beside a
 * stand-in embedding model).
 */
export function tryDiarizationModels(files: Partial<Record<DiarizationModelRole, string>>): Promise<void> {
  const key = identity(files)
  let trial = tried.get(key)
  if (!trial) {
    trial = runTrial(files).catch((err: Error) => {
      refused.set(key, err.message)
      throw err
    })
    tried.set(key, trial)
  }
  return trial
}

/** The refusal of a trial already made of these files as they are now, or null (none made, passed, or a file gone). */
export function knownRefusal(files: Partial<Record<DiarizationModelRole, string>>): string | null {
  try {
    return refused.get(identity(files)) ?? null
  } catch {
    return null
  }
}
