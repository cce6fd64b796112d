import { runEventLogConformance } from '@cognition/runtime/testing';
import { prismaEventLogHarness } from '../testing/prisma-event-log';

runEventLogConformance('StorageEventLog (SQLite)', prismaEventLogHarness('sqlite'));
