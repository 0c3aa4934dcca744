/** mend's version; records carry it as `mend/<version>`. A test keeps it equal to package.json's. */
export const MEND_VERSION = '0.1.0';
