import { VERSION } from '../version'
import { out } from './command'

/** `version` (or --version with any command but help). */
export async function versionCommand(): Promise<number> {
  out(VERSION)
  return 0
}
