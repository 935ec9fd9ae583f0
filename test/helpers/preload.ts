/**
 * Loaded before every test file (bunfig.toml [test] preload). bun test fires no process 'exit' event,
 * and a global afterAll here runs once after the last file: the shared PostgreSQL cluster of
 * backends.ts is stopped and removed there.
 */
import { afterAll } from 'bun:test'
import { stopSharedPostgres } from './backends'

afterAll(async () => {
  await stopSharedPostgres()
})
