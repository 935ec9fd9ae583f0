// The web library's script (docs/decisions.md "The web library"): starts the page the server rendered.
// Its modules call the same /v1 API as every client, with the signed-in session (api.js), and put
// every piece of text from the API into the page with textContent, never as HTML.
import { refreshBalance } from './api.js'
import { initAddDialog } from './add.js'
import { initAskLibrary } from './ask.js'
import { initLibrary } from './list.js'
import { initNote } from './note.js'
import { initRecorder } from './record.js'
import { initInvitationPage, initWorkspacePage } from './workspace.js'

const view = document.body.dataset.view
if (view === 'note') initNote()
else if (view === 'workspace') initWorkspacePage()
else if (view === 'invitation') initInvitationPage()
else {
  initLibrary()
  initAddDialog()
  initAskLibrary()
  initRecorder()
}
refreshBalance()
