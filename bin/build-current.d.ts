/** Whether dist/ holds a compiled file, no older than its source, for every file of src/. */
export function buildIsCurrent(dir?: string): boolean;
