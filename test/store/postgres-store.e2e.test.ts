/**
 * The store contract suite against PostgreSQL, on a real server (a fresh
 * database for this file). A database row holds one valid record, so the corpus
 * cases built from torn, garbage, invalid or foreign lines, and the zero-byte
 * log, are not applicable: the suite checks that seeding them is refused.
 */
import { PostgresSessionStore } from '../../src/store/postgres/pg-store.js';
import { databasesForFile, describePostgres } from '../support/postgres.js';
import { seedThroughAppends } from '../support/postgres-seed.js';
import { storeContract } from '../support/store-contract.js';

const newDatabase = databasesForFile('contract');

await describePostgres('PostgreSQL store', () => {
  storeContract({
    name: 'postgres',
    open: async () => new PostgresSessionStore({ spec: (await newDatabase()).url, env: {} }),
    seed: seedThroughAppends,
    notApplicable: {
      'torn-tail': 'a row cannot hold a torn line',
      'torn-tail-terminated-then-resumed': 'a row cannot hold a torn line',
      'damaged-lines-off-chain': 'a row cannot hold a damaged line',
      'garbage-line-replaced-chain-record': 'a row cannot hold a garbage line',
      'mixed-session-ids': "a session row cannot hold another session's record",
      'foreign-first-line': "a session row cannot hold another session's record",
      'empty-session': 'a database session exists only from its first record',
    },
  });
});
