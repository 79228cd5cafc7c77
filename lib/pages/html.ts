import escapeHtml from 'escape-html'

/** Markup that is already safe to send; everything else interpolated into `html` is escaped. */
export class SafeHtml {
  readonly value: string
  constructor (value: string) {
    this.value = value
  }

  toString (): string {
    return this.value
  }
}

function render (value: unknown): string {
  if (value instanceof SafeHtml) return value.value
  if (Array.isArray(value)) return value.map(render).join('')
  if (value === null || value === undefined || value === false) return ''
  return escapeHtml(String(value))
}

/**
 * Tagged template for views: `html\`<p>${text}</p>\`` escapes `text` with escape-html; nested
 * `html` results and arrays of them are inserted as they are; null, undefined and false render nothing.
 */
export function html (strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0]
  for (let i = 0; i < values.length; i++) out += render(values[i]) + strings[i + 1]
  return new SafeHtml(out)
}

/** Trusts `markup` as it is: only for markup the application wrote itself. */
export function unsafeRaw (markup: string): SafeHtml {
  return new SafeHtml(markup)
}
