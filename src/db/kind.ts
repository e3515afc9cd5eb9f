/** The two databases Paygate runs on. */
export type DatabaseKind = 'sqlite' | 'postgres';
