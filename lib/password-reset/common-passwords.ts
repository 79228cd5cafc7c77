// The entries of 15 characters or more among the 10,000 most common passwords: the first 10,000 of
// passwords.json in @zxcvbn-ts/language-common 4.1.3 (MIT; Copyright (c) 2012-2016 Dan Wheeler and Dropbox,
// Inc., Copyright (c) 2021 @zxcvbn-ts), which ranks them by how often they appear in leaked sets. The
// shorter ones are left out: the default check refuses every password under 15 characters before it looks
// here, so they could never match (the whole list is 80 KB of the package for nothing).
export const COMMON_LONG_PASSWORDS: ReadonlySet<string> = new Set(['mailcreated5240', 'polniypizdec0211'])
