/** Files and bytes done, on stderr: redrawn on a terminal, a line every 10% otherwise. */
export function filesProgress(label: string) {
  let lastDecile = -1
  const tty = Boolean(process.stderr.isTTY)
  return (done: { files: number; bytes: number }, total: { files: number; bytes: number }) => {
    const line = `${label}: ${done.files}/${total.files} files, ${(done.bytes / 1e6).toFixed(1)}/${(total.bytes / 1e6).toFixed(1)} MB`
    const decile = total.files ? Math.floor((done.files * 10) / total.files) : 10
    if (tty) process.stderr.write(`\r${line}${done.files === total.files ? '\n' : ''}`)
    else if (decile > lastDecile) {
      lastDecile = decile
      process.stderr.write(`${line}\n`)
    }
  }
}
