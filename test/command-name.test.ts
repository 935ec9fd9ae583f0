import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { commandName, type Started } from '../src/command-name'
import { ROOT, tempDir } from './helpers/process'
import { createWebTestApp } from './helpers/web'

// Real files, because "is this the program PATH finds" is answered by the file system.
const dir = tempDir('notesvc-cmdname-')
afterAll(() => dir.remove())
const home = join(dir.path, 'home')
const project = join(home, 'notesvc')
const bin = join(dir.path, 'usr-local-bin')
const spaced = join(dir.path, 'my tools')
for (const d of [join(project, 'dist'), join(project, 'src'), bin, spaced]) mkdirSync(d, { recursive: true })
for (const f of [join(project, 'dist', 'notesvc'), join(bin, 'notesvc'), join(spaced, 'notesvc')]) writeFileSync(f, '')

const binary = (execPath: string, cwd: string, onPath: string | null = null): Started =>
  ({ compiled: true, execPath, cwd, projectDir: '/$bunfs', which: name => (name === 'notesvc' ? onPath : null) })
const source = (cwd: string): Started =>
  ({ compiled: false, execPath: '/usr/bin/bun', cwd, projectDir: project, which: () => null })

describe('the command a hint prints is the one that works here', () => {
  test.each([
    ['the binary PATH finds, by its name', binary(join(bin, 'notesvc'), home, join(bin, 'notesvc')), 'notesvc'],
    ['dist/notesvc run from the project folder', binary(join(project, 'dist', 'notesvc'), project), 'dist/notesvc'],
    ['a binary in the current folder, with ./', binary(join(project, 'dist', 'notesvc'), join(project, 'dist')), './notesvc'],
    ['a binary elsewhere, by its whole path', binary(join(project, 'dist', 'notesvc'), bin), join(project, 'dist', 'notesvc')],
    ['a copy PATH does not find (another notesvc is on PATH)', binary(join(project, 'dist', 'notesvc'), home, join(bin, 'notesvc')), 'notesvc/dist/notesvc'],
    ['a path with a space, quoted for the shell', binary(join(spaced, 'notesvc'), dir.path), `'my tools/notesvc'`],
    ['from source in the project folder', source(project), 'bun run cli'],
    ['from source in another folder (bun run cli would not find the script)', source(home), 'bun notesvc/src/cli.ts'],
    ['from source far away', source(bin), `bun ${join(project, 'src', 'cli.ts')}`],
  ])('%s', (_, started, expected) => {
    expect(commandName(started)).toBe(expected)
  })

  test('this test process runs from source in the project folder', () => {
    expect(process.cwd()).toBe(ROOT)
    expect(commandName()).toBe('bun run cli')
  })

  test('the sign-in page tells the operator the command that sets a password, as run from source', async () => {
    const page = await createWebTestApp().browser().get('/signin')
    expect(page.status).toBe(200)
    expect(page.text).toContain('<code>bun run cli accounts password --email you@example.com</code>')
    expect(page.text).not.toContain('notesvc accounts password')
  })
})
