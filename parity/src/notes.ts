/** What a run left out, for the report: each time is counted, the first few are named. */
export interface Noted {
  count: number
  examples: string[]
}

/** The bounds a run may hit, as their flags. */
export type Cap = '--max-body' | '--max-sitemap-body' | '--sitemap-max'

const EXAMPLES = 5

/**
 * The addresses skipped for their origin (never fetched) and the caps hit, collected while the inputs
 * are read and the addresses compared, so that the report says what the run did not do.
 */
export class Notes {
  readonly skipped: Noted = { count: 0, examples: [] }
  readonly capped: Partial<Record<Cap, Noted>> = {}

  /** An address on an origin neither site has and no `--allow-origin` names: not fetched. */
  skip (url: string): void {
    note(this.skipped, url)
  }

  /** A cap stopped the reading of `where`. */
  cap (flag: Cap, where: string): void {
    note(this.capped[flag] ??= { count: 0, examples: [] }, where)
  }
}

function note (noted: Noted, what: string): void {
  noted.count++
  if (noted.examples.length < EXAMPLES && !noted.examples.includes(what)) noted.examples.push(what)
}
