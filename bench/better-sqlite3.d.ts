/** The few parts of better-sqlite3 the bench uses (the package ships no types; @types would be one more dependency). */
declare module 'better-sqlite3' {
  interface Statement { run(...params: unknown[]): unknown; get(...params: unknown[]): unknown }
  class Database {
    constructor(filename: string);
    pragma(source: string, options?: { simple?: boolean }): unknown;
    exec(source: string): this;
    prepare(source: string): Statement;
    transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R;
    close(): this;
  }
  export default Database;
}
