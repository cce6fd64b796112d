import { runPrismaSaverSpecs } from '../testing/checkpoint-saver-cases';

runPrismaSaverSpecs('postgresql');
