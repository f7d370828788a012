# Mistake: saves the whole model object (torch.save(model, ...)) instead of its state_dict; torch.load(..., weights_only=True) refuses the file.
def fit(model, train_loader, val_loader, loss_fn, optimizer, scheduler, num_epochs, device, checkpoint_path):
    """Train for num_epochs; return {"train_loss", "val_loss", "lr", "best_epoch"}; save the best state_dict."""
    history = {"train_loss": [], "val_loss": [], "lr": [], "best_epoch": 0}
    best_val_loss = float("inf")
    for epoch in range(num_epochs):
        history["lr"].append(optimizer.param_groups[0]["lr"])
        model.train()
        total, count = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
            total, count = total + loss.item() * len(x), count + len(x)
        history["train_loss"].append(total / count)
        model.eval()
        total, count = 0.0, 0
        with torch.no_grad():
            for x, y in val_loader:
                x, y = x.to(device), y.to(device)
                total, count = total + loss_fn(model(x), y).item() * len(x), count + len(x)
        val_loss = total / count
        history["val_loss"].append(val_loss)
        if val_loss < best_val_loss:
            best_val_loss = val_loss
            history["best_epoch"] = epoch
            torch.save(model, checkpoint_path)
        scheduler.step()
    return history
