import { listModels } from '../engines/asr/models'
import { importModel, pullModel, PullError } from '../engines/asr/pull'
import { DIARIZATION_ROLES, listDiarizationModels, type DiarizationModelRole } from '../engines/diarization/models'
import { DiarizationPullError, importDiarizationModel, pullDiarizationModels, type InstalledModel } from '../engines/diarization/pull'
import { commandLine } from '../command-name'
import { createProgressBar } from '../progress'
import { stringFlag, UsageError } from './args'
import { out, type CommandContext } from './command'
import { InputError } from './failure'

/** `models list|pull|import`: the Whisper and diarization models in the models folder. */
export async function modelsCommand({ args: p, config }: CommandContext): Promise<number> {
  const [, sub, arg] = p.positional
  if (sub === 'list' || sub === undefined) {
    const models = listModels(config.modelsDir)
    if (models.length === 0) process.stderr.write(`no models in ${config.modelsDir}; get one with: ${commandLine('models pull base.en')}\n`)
    for (const m of models) out(`${m.name}\t${m.sizeBytes}\t${m.path}`)
    for (const m of listDiarizationModels(config.modelsDir)) out(`${m.name}\t${m.sizeBytes}\t${m.path}`)
    return 0
  }
  // Diarization models: a failed download exits 1 (the README keeps 2 for a wrong command or input).
  const installed = (m: InstalledModel & { kept?: boolean }) => {
    process.stderr.write(`${m.role}: ${m.kept ? 'already there' : `${(m.bytes / 1e6).toFixed(1)} MB, an ONNX model with the metadata sherpa-onnx reads`}; SHA-256 ${m.sha256}\n`)
    out(m.path)
  }
  if (sub === 'pull' && arg === 'diarization') {
    const done = await pullDiarizationModels({ modelsDir: config.modelsDir, onFile: (role, url) => process.stderr.write(`${role}: downloading ${url}\n`) })
    for (const m of done) installed(m)
    return 0
  }
  if (sub === 'import') {
    if (!arg) throw new UsageError(`name the file to import, for example: ${commandLine('models import ggml-base.en.bin')} or ${commandLine('models import model.onnx --name segmentation')}`)
    // --name (shared/DECISIONS.md); --as, its first spelling, is still read for diarization models
    const as = stringFlag(p, 'name') ?? stringFlag(p, 'as')
    // an ONNX file is a diarization model whatever it is named; a role name marks one too
    const diarization = arg.endsWith('.onnx') || (as !== undefined && DIARIZATION_ROLES.includes(as as DiarizationModelRole))
    if (diarization && as !== undefined && !DIARIZATION_ROLES.includes(as as DiarizationModelRole)) throw new UsageError(`--name must be ${DIARIZATION_ROLES.join(' or ')} for a diarization model (.onnx)`)
    try {
      if (!diarization) {
        const r = await importModel({ file: arg, modelsDir: config.modelsDir, name: as })
        process.stderr.write(
          `${r.name}: ${(r.bytes / 1e6).toFixed(1)} MB, ${r.tensors} tensors read through; ` +
            `${r.loaded === 'loaded' ? 'loaded by whisper.cpp' : 'not loaded (whisper.cpp cannot run on this host)'}; ` +
            `${r.verified === 'sha1' ? "SHA-1 matches whisper.cpp's published one" : 'no published checksum for this name, not compared'}; SHA-256 ${r.sha256}\n`,
        )
        out(r.path)
        return 0
      }
      installed(await importDiarizationModel({ file: arg, modelsDir: config.modelsDir, as: as as DiarizationModelRole | undefined }))
    } catch (err) {
      if (err instanceof DiarizationPullError) throw new InputError(err.message)
      if (err instanceof PullError) throw err.kind === 'input' ? new InputError(err.message) : new Error(err.message)
      throw err
    }
    return 0
  }
  if (sub === 'pull') {
    if (!arg) throw new UsageError(`name the model to pull, for example: ${commandLine('models pull base.en')} (or diarization)`)
    const progress = createProgressBar(`ggml-${arg}.bin`)
    try {
      const r = await pullModel({ name: arg, modelsDir: config.modelsDir, baseUrl: config.modelsUrl, onProgress: progress.update })
      progress.done()
      process.stderr.write(`${r.resumed ? 'resumed and ' : ''}downloaded ${(r.bytes / 1e6).toFixed(1)} MB; checksum ${r.verified === 'none' ? 'not published for this model, not checked' : `${r.verified.toUpperCase()} verified`}\n`)
      out(r.path)
      return 0
    } catch (err) {
      progress.done()
      // a wrong name exits 2; an unreachable host or a failed check exits 1 (README, exit status)
      if (err instanceof PullError) throw err.kind === 'input' ? new InputError(err.message) : new Error(err.message)
      throw err
    }
  }
  throw new UsageError('models needs a subcommand: list, pull or import')
}
