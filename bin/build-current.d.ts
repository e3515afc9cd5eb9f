/** Whether dist/ holds a compiled file, no older than its source, for every file of src/, and a bundle newer than all of them. */
export function buildIsCurrent(): boolean;
