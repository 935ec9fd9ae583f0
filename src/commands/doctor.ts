import { runDoctor } from '../doctor'
import { out, type CommandContext } from './command'

/** `doctor`: what is ready and what is missing; exit 1 when something needed is missing. */
export async function doctorCommand({ config }: CommandContext): Promise<number> {
  const ok = await runDoctor(config, out)
  return ok ? 0 : 1
}
