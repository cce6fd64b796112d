import { runEventLogConformance } from '@cognition/runtime/testing';
import { prismaEventLogHarness } from './storage-event-log-case';

runEventLogConformance('StorageEventLog (SQLite)', prismaEventLogHarness('sqlite'));
