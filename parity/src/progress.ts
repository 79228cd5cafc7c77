/** Where progress goes: a terminal gets one redrawn bar, anything else a plain line every tenth. */
export interface ProgressStream {
  write: (text: string) => unknown
  isTTY?: boolean
}

export function progressReporter (stream: ProgressStream): { tick: (done: number, total: number, differing: number) => void, end: () => void } {
  let shown = 0
  return {
    tick (done, total, differing) {
      if (stream.isTTY === true) {
        const width = 30
        const filled = Math.round(width * done / total)
        stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} addresses, ${differing} differ`)
        shown = done
      } else if (done === total || done - shown >= Math.max(1, Math.ceil(total / 10))) {
        stream.write(`parity: ${done}/${total} addresses compared, ${differing} differ\n`)
        shown = done
      }
    },
    end () {
      if (stream.isTTY === true && shown > 0) stream.write('\n')
    }
  }
}
