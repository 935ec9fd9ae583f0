/**
 * Loaded before every test file (bunfig.toml [test] preload). bun test fires no process 'exit' event,
 * and a global afterAll here runs once after the last file: the shared PostgreSQL cluster of
 * backends.ts is stopped and removed there.
 */
import { afterAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { stopSharedPostgres } from './backends'

// A command run without NOTESVC_DATA_DIR uses $XDG_DATA_HOME/notesvc: a throwaway one for the test
// run (the commands the tests start inherit it), never the developer's ~/.local/share/notesvc.
const dataHome = mkdtempSync(join(tmpdir(), 'notesvc-xdg-'))
process.env.XDG_DATA_HOME = dataHome

afterAll(async () => {
  await stopSharedPostgres()
  rmSync(dataHome, { recursive: true, force: true })
})
