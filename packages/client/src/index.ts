/** @notesvc/client: the typed client (piece A of issue 34 fills this in). */
export const CLIENT_PACKAGE = '@notesvc/client'
