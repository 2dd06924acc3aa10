import { backupSuite } from "../support/backup";

backupSuite("sqlite");
