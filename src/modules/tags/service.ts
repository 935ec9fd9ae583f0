import type { Clock } from '../../clock'
import type { Store } from '../../db/store'
import type { IdGenerator } from '../../ids'
import { ApiError, notFound } from '../../http/errors'
import type { Library } from '../library'
import { MAX_TAGS_PER_NOTE, type CreateTagRequest, type NoteTags, type Tag, type UpdateTagRequest } from './model'
import { defaultColor, nameKey, tagName } from './names'
import type { TagRow, TagsRepo } from './repo'
import { suggestedTags } from './suggestions'

export type TagsService = ReturnType<typeof createTagsService>

const toTag = (r: TagRow): Tag => ({ id: r.id, name: r.name, color: r.color, createdAt: r.created_at })
const toNoteTag = (r: TagRow) => ({ id: r.id, name: r.name, color: r.color })

const tooMany = (field: string) => new ApiError('invalid_request', `A note carries at most ${MAX_TAGS_PER_NOTE} tags: remove some (DELETE /v1/notes/{id}/tags/{tagId}) before adding others.`, { details: [{ field, issue: `more than ${MAX_TAGS_PER_NOTE} tags` }] })
const taken = (name: string, id: string) => new ApiError('conflict', `This library has a tag named "${name}" already (${id}): use it, or choose another name.`)

/**
 * The library's tags and the tags of its notes. Every change of a note's tags rewrites its `tags`
 * column (what list items, search results, exports and webhooks show) in the same transaction.
 */
export function createTagsService(deps: { repo: TagsRepo; clock: Clock; ids: IdGenerator; store: Pick<Store, 'transaction'> }) {
  const { repo, clock, ids, store } = deps
  const now = () => clock.now().toISOString()

  async function requireTag(lib: Library, id: string, lock = false): Promise<TagRow> {
    const row = await repo.get(lib, id, lock)
    if (!row) throw notFound('tag', id)
    return row
  }

  async function requireNote(lib: Library, noteId: string) {
    const note = await repo.lockNote(lib, noteId)
    if (!note) throw notFound('note', noteId)
    return note
  }

  /** The library's tag of this name, made (with `color`, else the palette's) when it has none. */
  async function ensureTag(lib: Library, name: string, color?: string): Promise<TagRow> {
    const key = nameKey(name)
    const found = await repo.byKey(lib, key)
    if (found) return found
    const row: TagRow = { id: ids.next('tag'), account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0, name, name_key: key, color: color ?? defaultColor(name), created_at: now() }
    // a concurrent request may have made it first: then that one is the tag
    return (await repo.insert(row)) ? row : (await repo.byKey(lib, key))!
  }

  async function noteTags(noteId: string, structuredContent: string | null): Promise<NoteTags> {
    const rows = await repo.tagsOf(noteId)
    return { data: rows.map(toNoteTag), suggestedTags: suggestedTags(structuredContent, new Set(rows.map(r => r.name_key))) }
  }

  return {
    list: async (lib: Library) => ({ data: (await repo.list(lib)).map(toTag) }),

    async create(lib: Library, body: CreateTagRequest): Promise<Tag> {
      const name = tagName(body.name)
      const row: TagRow = { id: ids.next('tag'), account_id: lib.accountId, sandbox: lib.sandbox ? 1 : 0, name, name_key: nameKey(name), color: body.color ?? defaultColor(name), created_at: now() }
      if (!(await repo.insert(row))) throw taken(name, (await repo.byKey(lib, row.name_key))!.id)
      return toTag(row)
    },

    /** Renames or recolours a tag; the notes carrying it show the change (their tags rewritten, in one transaction). */
    update: (lib: Library, id: string, body: UpdateTagRequest): Promise<Tag> => store.transaction(async () => {
      const row = await requireTag(lib, id, true)
      const name = body.name === undefined ? row.name : tagName(body.name)
      const key = nameKey(name)
      const other = key === row.name_key ? null : await repo.byKey(lib, key)
      if (other) throw taken(other.name, other.id)
      const next = { ...row, name, name_key: key, color: body.color ?? row.color }
      await repo.update(lib, id, next)
      await repo.refreshNotes(await repo.notesWith(id), now())
      return toTag(next)
    }),

    /** Deletes a tag: the notes carrying it lose it, in the same transaction. */
    delete: (lib: Library, id: string): Promise<void> => store.transaction(async () => {
      await requireTag(lib, id, true)
      const notes = await repo.notesWith(id)
      await repo.delete(lib, id)
      await repo.refreshNotes(notes, now())
    }),

    /** A note's tags and the suggestions drawn from its summary's topics. */
    ofNote: (lib: Library, noteId: string): Promise<NoteTags> => store.transaction(async () => {
      const note = await requireNote(lib, noteId)
      return noteTags(noteId, note.structured_content)
    }),

    /**
     * Adds the tags named (each made when the library has none of that name; accepting a suggestion
     * is adding it), all or none: 400 when the note would carry more than MAX_TAGS_PER_NOTE.
     */
    add: (lib: Library, noteId: string, names: readonly string[], color?: string): Promise<NoteTags> => {
      const wanted = new Map<string, string>()
      names.forEach((raw, i) => {
        const name = tagName(raw, `tags[${i}]`)
        if (!wanted.has(nameKey(name))) wanted.set(nameKey(name), name)
      })
      if (wanted.size > MAX_TAGS_PER_NOTE) throw tooMany('tags')
      return store.transaction(async () => {
        const note = await requireNote(lib, noteId)
        const has = new Set((await repo.tagsOf(noteId)).map(t => t.name_key))
        const added = [...wanted].filter(([key]) => !has.has(key))
        if (has.size + added.length > MAX_TAGS_PER_NOTE) throw tooMany('tags')
        for (const [, name] of added) await repo.attach(noteId, (await ensureTag(lib, name, color)).id)
        if (added.length) await repo.refreshNotes([noteId], now())
        return noteTags(noteId, note.structured_content)
      })
    },

    /** Takes a tag off a note (the tag stays in the library); 404 for a note or tag of another library. */
    remove: (lib: Library, noteId: string, tagId: string): Promise<NoteTags> => store.transaction(async () => {
      const note = await requireNote(lib, noteId)
      await requireTag(lib, tagId)
      if ((await repo.detach(noteId, tagId)) > 0) await repo.refreshNotes([noteId], now())
      return noteTags(noteId, note.structured_content)
    }),
  }
}
