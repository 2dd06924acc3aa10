import { backupSuite } from "../support/backup";

backupSuite("postgres");
