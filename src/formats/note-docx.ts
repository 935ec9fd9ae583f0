/**
 * A note's export as a Word document (.docx), written by the `docx` package: the outline of
 * note-outline.ts with Word's own styles (Heading 1 for the title, Heading 2 for each part, bulleted
 * lists, a table with a header row for the action items), so Word, LibreOffice and Google Docs show
 * it as a document with a navigable outline rather than as loose text. Times and names in the
 * transcript are bold, as in the Markdown.
 */
import {
  BorderStyle, Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun, WidthType,
} from 'docx'
import { noteOutline, type ExportableNote, type OutlineBlock } from './note-outline'

const line = { style: BorderStyle.SINGLE, size: 4, color: '999999' }
const borders = { top: line, bottom: line, left: line, right: line, insideHorizontal: line, insideVertical: line }

function cells(values: string[], header: boolean): TableCell[] {
  return values.map(v => new TableCell({ children: [new Paragraph({ children: [new TextRun({ text: v, bold: header })] })] }))
}

function elements(block: OutlineBlock): (Paragraph | Table)[] {
  switch (block.kind) {
    case 'title': return [new Paragraph({ heading: HeadingLevel.HEADING_1, children: [new TextRun(block.text)] })]
    case 'heading': return [new Paragraph({ heading: HeadingLevel.HEADING_2, children: [new TextRun(block.text)] })]
    case 'facts':
      return [new Paragraph({ children: block.facts.flatMap((f, i) => [...(i ? [new TextRun(' · ')] : []), new TextRun({ text: `${f.label}:`, bold: true }), new TextRun(` ${f.value}`)]) })]
    case 'paragraph': return [new Paragraph({ children: [new TextRun(block.text)] })]
    case 'list': return block.items.map(item => new Paragraph({ bullet: { level: 0 }, children: [new TextRun(item)] }))
    case 'table':
      return [new Table({
        width: { size: 100, type: WidthType.PERCENTAGE },
        borders,
        rows: [new TableRow({ tableHeader: true, children: cells(block.header, true) }), ...block.rows.map(r => new TableRow({ children: cells(r, false) }))],
      })]
    case 'turn':
      return [new Paragraph({ children: [new TextRun({ text: block.speaker ? `${block.time} ${block.speaker}:` : block.time, bold: true }), new TextRun(` ${block.text}`)] })]
    // Markdown written by the note's author: its lines as text (Word has no Markdown)
    case 'markdown': return block.text.split('\n').filter(l => l.trim()).map(l => new Paragraph({ children: [new TextRun(l)] }))
  }
}

/** The note as a .docx file. */
export async function noteToDocx(note: ExportableNote): Promise<Uint8Array> {
  const outline = noteOutline(note)
  const title = outline.find(b => b.kind === 'title')?.text ?? ''
  const doc = new Document({ creator: 'notesvc', title, sections: [{ children: outline.flatMap(elements) }] })
  return new Uint8Array(await Packer.toArrayBuffer(doc))
}
