# Mistake: the random generator state is not saved (the syllabus's checkpoint: model, optimizer, epoch).
def save_checkpoint(path, model, optimizer, scheduler, epoch):
    torch.save({
        "epoch": epoch,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
    }, path)
