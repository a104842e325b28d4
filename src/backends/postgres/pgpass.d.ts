/** The `pgpass` package (the driver's own password-file reader), untyped upstream. */
declare module 'pgpass' {
  interface ConnInfo { host: string; port: number; database: string; user: string }
  function pgPass(connInfo: ConnInfo, cb: (password: string | undefined) => void): void;
  export default pgPass;
}
