// The library's folders, which both pages show: the library's sidebar and a note's folder select.
import { api } from './api.js'

/** the folders of the current library, as last loaded */
export let folders = []

export async function loadFolders() {
  const list = await api('GET', '/v1/folders')
  folders = list.data
}

export function folderName(id) {
  const f = folders.find(x => x.id === id)
  return f ? f.name : ''
}
