/** The dashboard in Chromium (`support/dashboard-browser.ts`) on PostgreSQL; the SQLite half is the other file. */
import { dashboardInChromium } from './support/dashboard-browser.ts';

await dashboardInChromium('postgres');
