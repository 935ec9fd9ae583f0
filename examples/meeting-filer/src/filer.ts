/**
 * Files a meeting: uploads the recording, waits until notesvc has its summary, puts the note in the
 * "Meetings" folder and writes the summary to `<date> <title>.md`.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import type { NotesvcClient, UploadRecordingOptions } from '@notesvc/client'
import { markdownFileName, markdownOf, type FiledNote } from './markdown'

export const MEETINGS_FOLDER = 'Meetings'

export interface Filed {
  noteId: string
  folderId: string
  /** the markdown file written, or null when the note was already filed (a repeated webhook) */
  path: string | null
}

/** The "Meetings" folder's id: the existing folder of that name, or a new one the first time. */
async function meetingsFolderId(client: NotesvcClient): Promise<string> {
  const { data } = await client.listFolders()
  const existing = data.find(folder => folder.name === MEETINGS_FOLDER)
  if (existing) return existing.id
  return (await client.createFolder({ name: MEETINGS_FOLDER })).id
}

/** Writes the file, then files the note; a note already in the folder was filed before and is left alone. */
export async function fileNote(client: NotesvcClient, note: FiledNote & { folderId?: string | null }, outDir: string): Promise<Filed> {
  const folderId = await meetingsFolderId(client)
  if (note.folderId === folderId) return { noteId: note.id, folderId, path: null }
  await mkdir(outDir, { recursive: true })
  const path = await writeNew(outDir, markdownFileName(note), markdownOf(note))
  await client.updateNote({ id: note.id, folderId })
  return { noteId: note.id, folderId, path }
}

/** Writes the file under its name, or `name (2).md`, … when a meeting of that title that day was filed already. */
async function writeNew(dir: string, name: string, text: string): Promise<string> {
  for (let n = 1; ; n++) {
    const path = join(dir, n === 1 ? name : name.replace(/\.md$/, ` (${n}).md`))
    try {
      await writeFile(path, text, { flag: 'wx' })
      return path
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
  }
}

export interface FileRecordingOptions {
  /** the recording: a path (its file name is sent as the upload's name) */
  file: string
  outDir: string
  onStatus?: UploadRecordingOptions['onStatus']
  onUploadProgress?: UploadRecordingOptions['onUploadProgress']
  /** how often the status is polled while processing (the client's default otherwise) */
  pollMs?: number
}

/** Uploads the recording, waits for Done (the client throws NoteFailedError on Error), files the note. */
export async function fileRecording(client: NotesvcClient, options: FileRecordingOptions): Promise<Filed> {
  // the whole note once Done, with the structured content that lists the action items
  const note = await client.uploadRecording({
    file: options.file,
    fileName: basename(options.file),
    styleId: 'meeting-notes',
    onStatus: options.onStatus,
    onUploadProgress: options.onUploadProgress,
    pollMs: options.pollMs,
  })
  return fileNote(client, note, options.outDir)
}
