/**
 * Reading one environment variable: the error a value that cannot be used stops the start with, and
 * the small parsers every setting uses. Below config.ts, so that the storage and speech adapters can
 * parse their own variables (config.ts asks their registries) without an import cycle.
 */

/** Thrown when the environment holds a value we cannot use; the message says what to set. */
export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>

export function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback
  if ((allowed as readonly string[]).includes(value)) return value as T
  throw new ConfigError(`${name}=${value} is not valid; use one of: ${allowed.join(', ')}`)
}

export function integer(name: string, value: string | undefined, fallback: number, min: number, max: number): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name}=${value} is not valid; use a whole number from ${min} to ${max}`)
  }
  return n
}

export function flag(value: string | undefined): boolean {
  return value !== undefined && ['1', 'true', 'yes', 'on'].includes(value.toLowerCase())
}
