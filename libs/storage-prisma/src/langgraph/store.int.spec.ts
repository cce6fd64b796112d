import { runPrismaStoreSpecs } from './store-spec-cases';

runPrismaStoreSpecs('postgresql');
