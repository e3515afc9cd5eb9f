/** The dashboard in Chromium (`support/dashboard-browser.ts`) on SQLite; the PostgreSQL half is the other file. */
import { dashboardInChromium } from './support/dashboard-browser.ts';

await dashboardInChromium('sqlite');
