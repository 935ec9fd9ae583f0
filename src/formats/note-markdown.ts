/**
 * A note's export as Markdown (CommonMark with GitHub's tables): the outline of note-outline.ts as an
 * mdast tree, written by `mdast-util-to-markdown` with `mdast-util-gfm`, the serializer of the
 * unified/remark project. It escapes what a note's text could turn into markup (`#` at a line's
 * start, `*`, `_`, `[`, `<`, `|` in a table cell, `~~`, a `1.` that would start a list…) only where
 * it would, so a title like "Q3 #1 *draft* | final" reads back as that text and nothing else.
 */
import type { BlockContent, PhrasingContent, Root, RootContent, TableRow } from 'mdast'
import { gfmToMarkdown } from 'mdast-util-gfm'
import { toMarkdown } from 'mdast-util-to-markdown'
import { noteOutline, type ExportableNote, type OutlineBlock } from './note-outline'

const text = (value: string): PhrasingContent => ({ type: 'text', value })
const strong = (value: string): PhrasingContent => ({ type: 'strong', children: [text(value)] })
const paragraph = (children: PhrasingContent[]): BlockContent => ({ type: 'paragraph', children })

function node(block: OutlineBlock): RootContent {
  switch (block.kind) {
    case 'title': return { type: 'heading', depth: 1, children: [text(block.text)] }
    case 'heading': return { type: 'heading', depth: 2, children: [text(block.text)] }
    case 'facts': return paragraph(block.facts.flatMap((f, i) => [...(i ? [text(' · ')] : []), strong(`${f.label}:`), text(` ${f.value}`)]))
    case 'paragraph': return paragraph([text(block.text)])
    case 'list':
      return { type: 'list', ordered: false, spread: false, children: block.items.map(item => ({ type: 'listItem', spread: false, children: [paragraph([text(item)])] })) }
    case 'table': {
      const row = (cells: string[]): TableRow => ({ type: 'tableRow', children: cells.map(c => ({ type: 'tableCell', children: [text(c)] })) })
      return { type: 'table', align: block.header.map(() => null), children: [row(block.header), ...block.rows.map(row)] }
    }
    case 'turn': return paragraph([strong(block.speaker ? `${block.time} ${block.speaker}:` : block.time), text(` ${block.text}`)])
    // written as Markdown by its author: kept as it is (an mdast `html` node is written verbatim)
    case 'markdown': return { type: 'html', value: block.text }
  }
}

/** The note as a Markdown document, ending in a newline. */
export function noteToMarkdown(note: ExportableNote): string {
  const tree: Root = { type: 'root', children: noteOutline(note).map(node) }
  return toMarkdown(tree, { bullet: '-', emphasis: '_', strong: '*', extensions: [gfmToMarkdown()] })
}
