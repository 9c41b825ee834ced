/** The bytes of JSON's structure, for the byte-level scanners (src/graph/json-scan.ts, src/cli/split.ts). */
export const QUOTE = 0x22
export const BACKSLASH = 0x5c
export const LBRACE = 0x7b
export const RBRACE = 0x7d
export const LBRACKET = 0x5b
export const RBRACKET = 0x5d
export const COMMA = 0x2c
export const COLON = 0x3a
