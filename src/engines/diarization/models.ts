/**
 * The `sherpa-onnx` diarization engine's two model files, in `<modelsDir>/diarization/`:
 * - `segmentation.onnx`: a pyannote segmentation model (who is speaking in each frame of 10-s windows;
 *   sherpa-onnx's export of pyannote/segmentation-3.0, 5.9 MB);
 * - `embedding.onnx`: a speaker-embedding (voice print) model, wespeaker or 3D-Speaker
 *   (the default: 3D-Speaker's ERes2Net base, the one sherpa-onnx's diarization examples use, 38 MB).
 * `notesvc models pull diarization` downloads both; `notesvc models import FILE` copies one in.
 *
 * Each file is checked before the addon sees it (`checkDiarizationModel`): sherpa-onnx ends the
 * process on a file that is not ONNX or lacks a metadata key (see onnx.ts), so the checks here are the
 * ones it would otherwise die on.
 */
import { existsSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { commandLine } from '../../command-name'
import { OnnxFormatError, readOnnxSummary } from './onnx'

export type DiarizationModelRole = 'segmentation' | 'embedding'
export const DIARIZATION_ROLES: DiarizationModelRole[] = ['segmentation', 'embedding']

const DIARIZATION_DIR = 'diarization'

export function diarizationModelPath(modelsDir: string, role: DiarizationModelRole): string {
  return join(modelsDir, DIARIZATION_DIR, `${role}.onnx`)
}

export function diarizationModelPaths(modelsDir: string): Record<DiarizationModelRole, string> {
  return { segmentation: diarizationModelPath(modelsDir, 'segmentation'), embedding: diarizationModelPath(modelsDir, 'embedding') }
}

/** The diarization model files present, named `diarization/<role>` (for `models list`). */
export function listDiarizationModels(modelsDir: string): { name: string; path: string; sizeBytes: number }[] {
  return DIARIZATION_ROLES.map(role => ({ role, path: diarizationModelPath(modelsDir, role) }))
    .filter(m => existsSync(m.path))
    .map(m => ({ name: `${DIARIZATION_DIR}/${m.role}`, path: m.path, sizeBytes: statSync(m.path).size }))
}

/** What `doctor` and the engine say when a file is missing. */
export function pullDiarizationCommand(): string {
  return commandLine('models pull diarization')
}

export interface SherpaModelsState {
  ready: boolean
  /** the model files that are not there (absolute paths) */
  missing: string[]
  /** one line: ready, or what is missing and the command that fixes it */
  message: string
}

/** Whether both model files are present (no file is read, nothing is loaded): for `doctor` and describe(). */
export function sherpaModelsPresent(modelsDir: string): SherpaModelsState {
  const missing = Object.values(diarizationModelPaths(modelsDir)).filter(p => !existsSync(p))
  if (missing.length === 0) return { ready: true, missing, message: `diarization models in ${join(modelsDir, DIARIZATION_DIR)}` }
  return { ready: false, missing, message: missingModelsMessage(missing) }
}

export function missingModelsMessage(missing: string[]): string {
  return (
    `the sherpa-onnx diarization model${missing.length > 1 ? 's are' : ' is'} missing: ${missing.join(', ')}; ` +
    `download them with \`${pullDiarizationCommand()}\`, or on a host without internet copy the files from another machine ` +
    `and run \`${commandLine('models import FILE --name segmentation')}\` (or \`--name embedding\`)`
  )
}

/** The metadata keys sherpa-onnx reads as integers and exits without (SHERPA_ONNX_READ_META_DATA). */
const REQUIRED_INTEGERS: Record<DiarizationModelRole, string[]> = {
  segmentation: ['sample_rate', 'window_size', 'receptive_field_size', 'receptive_field_shift', 'num_speakers', 'powerset_max_classes', 'num_classes'],
  embedding: ['output_dim', 'sample_rate', 'normalize_samples'],
}

/** Embedding frameworks sherpa-onnx 1.13 runs with the general extractor (speaker-embedding-extractor-model.cc). */
const EMBEDDING_FRAMEWORKS = ['wespeaker', '3d-speaker']

export class DiarizationModelError extends Error {}

/** Which role a file's metadata says it plays, or null. */
function roleOf(metadata: Record<string, string>): DiarizationModelRole | null {
  if ('powerset_max_classes' in metadata || 'receptive_field_shift' in metadata) return 'segmentation'
  if ('framework' in metadata || 'output_dim' in metadata) return 'embedding'
  return null
}

/**
 * Checks that `path` is an ONNX model sherpa-onnx will load for `role` (or, without one, for the role
 * its metadata names); returns the role. Throws DiarizationModelError saying what is wrong.
 */
export function checkDiarizationModel(path: string, role?: DiarizationModelRole): DiarizationModelRole {
  let metadata: Record<string, string>
  try {
    metadata = readOnnxSummary(path).metadata
  } catch (err) {
    if (err instanceof OnnxFormatError) throw new DiarizationModelError(`${path} is not an ONNX model (it ${err.message})`)
    throw new DiarizationModelError(`${path} cannot be read (${(err as Error).message})`)
  }
  const found = role ?? roleOf(metadata)
  if (!found) {
    throw new DiarizationModelError(`${path} is an ONNX model, but not one for sherpa-onnx diarization (no pyannote or speaker-embedding metadata); say which it is with --name segmentation or --name embedding`)
  }
  const problems: string[] = []
  for (const key of REQUIRED_INTEGERS[found]) {
    const v = metadata[key]
    if (v === undefined || v === '') problems.push(`no "${key}"`)
    else if (!/^\d+$/.test(v.trim())) problems.push(`"${key}" is "${v}", not a whole number`)
  }
  if (found === 'segmentation') {
    if (metadata.sample_rate && Number(metadata.sample_rate) !== 16_000) problems.push(`sample_rate is ${metadata.sample_rate}, notesvc decodes 16000`)
    if (Number(metadata.powerset_max_classes) > 2) problems.push(`powerset_max_classes is ${metadata.powerset_max_classes} (sherpa-onnx supports at most 2)`)
    if (Number(metadata.window_size) === 0 || Number(metadata.receptive_field_shift) === 0) problems.push('window_size and receptive_field_shift must be above 0')
  } else {
    if (!EMBEDDING_FRAMEWORKS.includes(metadata.framework ?? '')) problems.push(`framework is "${metadata.framework ?? ''}", sherpa-onnx expects ${EMBEDDING_FRAMEWORKS.join(' or ')}`)
    if (!metadata.language) problems.push('no "language"')
    const norm = metadata.feature_normalize_type ?? ''
    if (norm !== '' && norm !== 'global-mean') problems.push(`feature_normalize_type is "${norm}" (sherpa-onnx knows global-mean)`)
  }
  if (problems.length > 0) {
    throw new DiarizationModelError(`${path} is not a ${found} model sherpa-onnx can load: ${problems.join('; ')}`)
  }
  return found
}
