// Number formatting and the progress log, shared by the runner and the report.

/** `1,234.5`; `n/a` for a figure that was not measured. */
export function fmt (x, digits) {
  return x === undefined || Number.isNaN(x) ? 'n/a' : x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

/** `42%`; `n/a` for a share that was not measured. */
export function percent (x) {
  return x === undefined || Number.isNaN(x) ? 'n/a' : `${Math.round(x * 100)}%`
}

export function log (...args) {
  console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...args)
}
