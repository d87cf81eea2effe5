// data/*.csv modules, produced by the `csv_module` transform of extensions/node-team.
declare module '*.csv' {
  /** The header row. */
  export const columns: string[]
  /** One object per record, keyed by the header. */
  const rows: Record<string, string>[]
  export default rows
}
